/**
 * A local token estimate, used until the tokens module (src/gateway/tokens/) replaces it: about
 * one token per 4 UTF-8 bytes of text, at least one per word-like piece, plus 4 per message for
 * role and framing. Deterministic; the mock provider counts with the same function, so its usage
 * never exceeds what the gateway reserved for it.
 */
const MESSAGE_OVERHEAD = 4;

export function estimateTextTokens(text: string): number {
  if (text.length === 0) return 0;
  const bytes = Buffer.byteLength(text, "utf8");
  const words = text.split(/\s+/).filter((w) => w.length > 0).length;
  return Math.max(Math.ceil(bytes / 4), words);
}

/** The text of one message's content (strings and text parts; other parts by their JSON size). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        const part = p as { type?: unknown; text?: unknown };
        return part.type === "text" && typeof part.text === "string" ? part.text : JSON.stringify(p);
      })
      .join("\n");
  }
  return content === null || content === undefined ? "" : JSON.stringify(content);
}

/** Estimated prompt tokens of a chat request's messages (and tools, by their JSON text). */
export function estimatePromptTokens(messages: readonly unknown[], tools?: readonly unknown[]): number {
  let n = 0;
  for (const m of messages) {
    const msg = m as { content?: unknown; tool_calls?: unknown; name?: unknown };
    n += MESSAGE_OVERHEAD + estimateTextTokens(contentText(msg.content));
    if (msg.tool_calls !== undefined) n += estimateTextTokens(JSON.stringify(msg.tool_calls));
  }
  if (tools && tools.length > 0) n += estimateTextTokens(JSON.stringify(tools));
  return n;
}
