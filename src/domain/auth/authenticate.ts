import { DomainError } from "../errors.js";
import { hashKey } from "../../lib/ids.js";
import type { Clock } from "../../lib/clock.js";
import { keyUsable, type Policy } from "../policy/policy.js";
import type { Principal } from "./principal.js";

const BEARER_RE = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves an Authorization header to a principal, from the policy cache (no record-store query
 * for a known key). A missing, malformed, unknown, deleted, disabled or expired key is 401 with no
 * hint of which: the caller learns nothing about keys.
 */
export async function authenticate(
  policy: Policy,
  clock: Clock,
  header: string | undefined,
): Promise<Principal> {
  if (header === undefined || header === "") {
    throw new DomainError("unauthorized", "Missing Authentication header");
  }
  const m = BEARER_RE.exec(header);
  if (!m?.[1]) throw new DomainError("unauthorized", "Authorization header must be 'Bearer <key>'");
  const key = await policy.keyByHash(hashKey(m[1]));
  if (!key || !keyUsable(key, clock.now())) {
    throw new DomainError("unauthorized", "Invalid or expired API key");
  }
  return {
    keyHash: key.hash,
    keyId: key.id,
    organizationId: key.organizationId,
    workspaceId: key.workspaceId,
    isManagement: key.isManagement,
  };
}
