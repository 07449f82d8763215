import { DomainError } from "../domain/errors.js";
import { keyLive, type KeyPolicy, type Policy, type WorkspacePolicy } from "../domain/policy/policy.js";
import { hashKey } from "../lib/ids.js";
import type { Clock } from "../lib/clock.js";

/**
 * The gateway reads key and workspace policy through the same per-instance cache as the management
 * routes (src/domain/policy/): no record-store query for a known key or workspace, changes seen at
 * once on the instance that made them and within POLICY_PROPAGATION_BOUND_MS elsewhere.
 */
export type GatewayPolicy = Pick<Policy, "keyByHash" | "knownKey" | "workspace" | "guardrails">;

const BEARER_RE = /^Bearer\s+(\S+)\s*$/i;

export const MANAGEMENT_KEY_INFERENCE =
  "Management keys cannot make inference requests: use an ordinary API key (POST /api/v1/keys creates one)";

/**
 * The caller of an inference route: unknown, deleted or expired key 401; disabled key 403;
 * management key 403 (saying so). The key comes as `Authorization: Bearer <key>`, or as
 * `x-api-key: <key>` (what the Anthropic client and Claude Code send with ANTHROPIC_API_KEY);
 * Authorization wins when both are there.
 */
export async function authenticateInference(
  policy: GatewayPolicy,
  clock: Clock,
  header: string | undefined,
  apiKeyHeader?: string,
): Promise<KeyPolicy> {
  return inferenceKey(await policy.keyByHash(presentedKeyHash(header, apiKeyHeader)), clock);
}

/**
 * authenticateInference, answered synchronously when the policy already knows the key (nearly
 * every request: the policy cache), so that the request goes on without a promise; a promise
 * otherwise. Throws (or rejects) the same errors.
 */
export function authenticateInferenceNow(
  policy: GatewayPolicy,
  clock: Clock,
  header: string | undefined,
  apiKeyHeader?: string,
): KeyPolicy | Promise<KeyPolicy> {
  const hash = presentedKeyHash(header, apiKeyHeader);
  const known = policy.knownKey?.(hash);
  if (known !== undefined) return inferenceKey(known, clock);
  return policy.keyByHash(hash).then((key) => inferenceKey(key, clock));
}

/** The hash of the key the request presents; 401 when it presents none or a malformed header. */
function presentedKeyHash(header: string | undefined, apiKeyHeader: string | undefined): string {
  let secret: string;
  if (header !== undefined && header !== "") {
    const m = BEARER_RE.exec(header);
    if (!m?.[1]) throw new DomainError("unauthorized", "Authorization header must be 'Bearer <key>'");
    secret = m[1];
  } else if (apiKeyHeader !== undefined && apiKeyHeader.trim() !== "") {
    secret = apiKeyHeader.trim();
  } else {
    throw new DomainError("unauthorized", "Missing Authentication header");
  }
  return hashKey(secret);
}

/** The key found for the presented one, if it may make inference requests now (else the refusal). */
function inferenceKey(key: KeyPolicy | null, clock: Clock): KeyPolicy {
  const now = clock.now();
  // Disabled is told apart (403) from unknown, deleted or expired (401).
  if (!key || !keyLive(key, now)) {
    throw new DomainError("unauthorized", "Invalid or expired API key");
  }
  if (key.isManagement) throw new DomainError("forbidden", MANAGEMENT_KEY_INFERENCE);
  if (key.disabled) throw new DomainError("forbidden", "API key is disabled");
  return key;
}

/**
 * The policy of the key's workspace. A key always belongs to a live workspace (a workspace with
 * keys cannot be deleted); should that ever not hold, the request is refused rather than served
 * without the workspace's budgets.
 */
export async function keyWorkspace(policy: GatewayPolicy, key: KeyPolicy): Promise<WorkspacePolicy> {
  const ws = await policy.workspace(key.workspaceId);
  if (!ws || ws.deleted) {
    throw new DomainError("forbidden", "The key's workspace no longer exists");
  }
  return ws;
}
