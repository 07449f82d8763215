import { DomainError } from "../errors.js";
import { hashKey } from "../../lib/ids.js";
import type { Clock } from "../../lib/clock.js";
import type { Db } from "../../stores/record-store.js";
import type { Principal } from "./principal.js";

const BEARER_RE = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves an Authorization header to a principal. A missing, malformed, unknown, deleted,
 * disabled or expired key is 401 with no hint of which: the caller learns nothing about keys.
 */
export async function authenticate(db: Db, clock: Clock, header: string | undefined): Promise<Principal> {
  if (header === undefined || header === "") {
    throw new DomainError("unauthorized", "Missing Authentication header");
  }
  const m = BEARER_RE.exec(header);
  if (!m?.[1]) throw new DomainError("unauthorized", "Authorization header must be 'Bearer <key>'");
  const row = await db
    .selectFrom("api_keys")
    .select(["id", "hash", "organization_id", "workspace_id", "is_management", "disabled", "expires_at"])
    .where("hash", "=", hashKey(m[1]))
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  const now = clock.now().toISOString();
  if (!row || Number(row.disabled) === 1 || (row.expires_at !== null && row.expires_at <= now)) {
    throw new DomainError("unauthorized", "Invalid or expired API key");
  }
  return {
    keyHash: row.hash,
    keyId: Number(row.id),
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    isManagement: Number(row.is_management) === 1,
  };
}
