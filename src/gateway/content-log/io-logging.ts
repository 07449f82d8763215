import { sampledIn } from "../../broadcast/sampling.js";
import type { IoLoggingPolicy } from "../../domain/policy/policy.js";

/**
 * Whether a generation's content is kept (docs/content-logging.md "Which generations"): its
 * workspace has IO logging on; the key that made it is among `io_logging_api_key_ids` unless that
 * is null (null: every key; `[]`: no key, as docs/api-notes.md says of the field); and the
 * sampling draw passes. The draw is Broadcast's (sampling.ts): a hash
 * of the workspace and the session (or the generation when it has none), so a session is kept or
 * left out whole, and every instance and every replay decides the same.
 */
export function logsContent(
  io: IoLoggingPolicy,
  workspaceId: string,
  keyId: number | null,
  sessionId: string | null,
  generationId: string,
): boolean {
  if (!io.enabled) return false;
  if (io.apiKeyIds !== null && (keyId === null || !io.apiKeyIds.includes(keyId))) return false;
  return sampledIn(`io-logging/${workspaceId}`, io.samplingRate, sessionId, generationId);
}
