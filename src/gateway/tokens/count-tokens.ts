import { createRequire } from "node:module";

/**
 * Token counts for when an upstream reports no usage, and for the worst-case reservation made
 * before a request is forwarded. One encoding for every model: o200k_base (GPT-4o and later),
 * shipped inside gpt-tokenizer, so nothing is downloaded at run time. Other vendors' tokenizers
 * differ by some percent either way; the gateway settles on the upstream's own usage whenever
 * it reports one, so this count only matters when none came.
 *
 * Special-token strings in user text (`<|endoftext|>`) are counted as ordinary text, never
 * refused: they are data here, not control tokens.
 */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Every chat message is wrapped in <|im_start|>{role}…<|im_end|>: about 3 tokens (OpenAI's rule). */
export const TOKENS_PER_MESSAGE = 3;
/** The assistant turn the model is primed with: <|im_start|>assistant<|im_sep|>. */
export const REPLY_PRIMING_TOKENS = 3;
/**
 * An image part, whatever its size (it is not fetched to measure): a high-detail 1024×1024 image
 * on GPT-4o-class models (85 + 4 × 170). Larger images cost more upstream; the upstream's usage
 * settles the real number.
 */
export const IMAGE_TOKENS = 765;

type CountTokens = typeof import("gpt-tokenizer/encoding/o200k_base").countTokens;
let counter: CountTokens | null = null;

/**
 * The encoder, loaded on first use: its 200k-token table costs about half a second of CPU and
 * tens of MB to load, which processes that never count tokens (the CLI, most tests) should not
 * pay. The server loads it in warm-up, before it listens (warmUpTokenCounter).
 */
function encoder(): CountTokens {
  counter ??= (
    createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as { countTokens: CountTokens }
  ).countTokens;
  return counter;
}

export function countTextTokens(text: string): number {
  return text === "" ? 0 : encoder()(text, AS_TEXT);
}

/** Loads the encoder now: call once at start, off the request path. */
export function warmUpTokenCounter(): void {
  countTextTokens("warm up");
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function contentTokens(content: unknown): number {
  if (typeof content === "string") return countTextTokens(content);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const part of content) {
    if (!isObject(part)) continue;
    if (typeof part.text === "string") n += countTextTokens(part.text);
    else if (part.type === "image_url") n += IMAGE_TOKENS;
    else n += countTextTokens(JSON.stringify(part)); // audio, files: their encoded size, a generous bound
  }
  return n;
}

/**
 * An estimate of a chat request's prompt tokens: each message's role, name, content and tool
 * calls plus TOKENS_PER_MESSAGE, the reply priming, and the tool definitions (as JSON, which
 * counts a little more than the upstream's own rendering of them). Unknown shapes count as 0
 * rather than throwing: the request was validated before, and this must never fail a request.
 */
export function countPromptTokens(messages: readonly unknown[], tools?: readonly unknown[]): number {
  let n = REPLY_PRIMING_TOKENS;
  for (const m of messages) {
    if (!isObject(m)) continue;
    n += TOKENS_PER_MESSAGE;
    if (typeof m.role === "string") n += countTextTokens(m.role);
    if (typeof m.name === "string") n += countTextTokens(m.name) + 1;
    n += contentTokens(m.content);
    if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0)
      n += countTextTokens(JSON.stringify(m.tool_calls));
    if (typeof m.tool_call_id === "string") n += countTextTokens(m.tool_call_id);
  }
  if (tools && tools.length > 0) n += countTextTokens(JSON.stringify(tools));
  return n;
}
