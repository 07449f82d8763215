import type { BroadcastMessage } from "../../broadcast/encoders/encoder.js";
import type { SecretBox } from "../../lib/secret-box.js";

/**
 * What content logging keeps of a generation (docs/content-logging.md): the LiveContext's input
 * and output, so text only, every image, audio, file or video part a placeholder
 * (src/broadcast/stored-content.ts), within BROADCAST_MAX_CONTEXT_BYTES. Sealed whole.
 */
export interface LoggedContent {
  messages: BroadcastMessage[];
  completion: string | null;
}

/** The associated data that binds a sealed content to its row (a ciphertext copied elsewhere fails). */
const aadOf = (organizationId: string, id: string): string => `generation_content/${organizationId}/${id}`;

export function sealContent(box: SecretBox, organizationId: string, id: string, c: LoggedContent): string {
  return box.seal(
    JSON.stringify({ messages: c.messages, completion: c.completion }),
    aadOf(organizationId, id),
  );
}

/** The content sealed for (organizationId, id). Throws when the ciphertext is not that row's. */
export function openContent(
  box: SecretBox,
  organizationId: string,
  id: string,
  sealed: string,
): LoggedContent {
  const parsed = JSON.parse(box.open(sealed, aadOf(organizationId, id))) as Partial<LoggedContent>;
  return {
    messages: Array.isArray(parsed.messages) ? parsed.messages : [],
    completion: typeof parsed.completion === "string" ? parsed.completion : null,
  };
}

/** The instant before which content is past its retention. */
export const retentionCutoff = (now: Date, retentionMs: number): string =>
  new Date(now.getTime() - retentionMs).toISOString();
