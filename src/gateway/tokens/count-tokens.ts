import { createRequire } from "node:module";
import { imageTokens, promptImageOf, type ImageRule, type PromptImage } from "./image-tokens.js";

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
type Encoding = typeof import("gpt-tokenizer/encoding/o200k_base");
type CountTokens = Encoding["countTokens"];
let counter: CountTokens | null = null;

/**
 * The encoder, loaded on first use: its 200k-token table costs about half a second of CPU and
 * tens of MB to load, which processes that never count tokens (the CLI, most tests) should not
 * pay. The server loads it in warm-up, before it listens (warmUpTokenCounter).
 *
 * Its merge cache is turned off. It keeps up to 100,000 pieces of the texts counted, and a piece
 * of 13 characters or more is a slice that keeps its whole text alive (V8's sliced strings): any
 * key holder could pin a megabyte per request (about 40 MB after 200 requests in a measurement,
 * growing). It saved nothing measurable on varied prompts (docs/performance.md).
 */
function encoder(): CountTokens {
  if (counter === null) {
    const encoding = createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as Encoding;
    encoding.setMergeCacheSize(0);
    counter = encoding.countTokens;
  }
  return counter;
}

/**
 * Texts are counted in pieces of at most this many UTF-16 units. Byte-pair merging is quadratic in
 * the length of a run the tokenizer cannot split (letters, punctuation or spaces without a break):
 * 8,000 characters took 20 ms, a megabyte would hold the event loop for minutes. A piece ends
 * where the encoder's own pieces break (isCut) when there is such a place, so prose counts exactly
 * as a whole; a run without one is cut every RUN units, which may count a token more per cut.
 */
export const CHUNK = 512;
/** Where a run without whitespace is cut. */
export const RUN = 64;
/**
 * UTF-16 units counted exactly per request (a prompt, or one text): about 16,000 tokens of prose.
 * Text the encoder cannot shortcut costs ~0.4-0.9 µs per unit (its rare-pair lookups), so a
 * megabyte would still cost most of a second; past the budget the rest is estimated at the larger
 * of the rate counted so far and one token per 4 UTF-8 bytes (docs/gateway.md "Token counts").
 */
export const EXACT_UNITS = 65_536;

/** What one request has counted exactly so far, shared by its texts. */
export class CountBudget {
  left = EXACT_UNITS;
  tokens = 0;
  units = 0;
}

const isWhitespace = (code: number): boolean =>
  code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x2028 || code === 0x2029;
const isAsciiWord = (code: number): boolean =>
  (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);

/**
 * Whether the encoder's pieces never span position `at`: a space after a non-space (it starts the
 * next word's piece, " word"), or a line break after a letter or digit (punctuation takes the
 * line break into its piece, ".\n").
 */
function isCut(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  const before = text.charCodeAt(at - 1);
  return (code === 0x20 && !isWhitespace(before)) || (code === 0x0a && isAsciiWord(before));
}

/** The end of the piece that starts at `start`: the last cut (isCut) within CHUNK, else RUN units on. */
function pieceEnd(text: string, start: number): number {
  let end = Math.min(start + CHUNK, text.length);
  if (end === text.length) return end;
  let cut = end;
  while (cut > start + 1 && !isCut(text, cut)) cut--;
  if (cut > start + 1) return cut;
  end = start + RUN;
  const before = text.charCodeAt(end - 1);
  return before >= 0xd800 && before <= 0xdbff ? end - 1 : end; // not between a surrogate pair
}

/**
 * Counts of whole texts counted before, so that what a client sends again is not merged again: a
 * chat re-sends its whole history with every turn, and system prompts repeat across requests.
 * Byte-pair merging costs ~0.4-0.9 µs per unit without the encoder's merge cache (off, above), so
 * a conversation of 16,000 tokens held the event loop for tens of milliseconds on every turn.
 *
 * A hit stands for exactly what counting would return: a text is kept only when it was counted
 * whole and exactly, and a hit is used only where the request's budget still holds the whole text
 * (and it is spent as counting would spend it), so a prompt counts the same with or without the
 * cache. Bounded by the units it holds (MAX_CACHED_UNITS, ~8 MB of UTF-16, and ENTRY_UNITS more
 * per entry for the Map), least recently used dropped first; texts over CACHEABLE_UNITS are not
 * kept. Keys are the texts themselves: strings of a parsed JSON body are their own copies, not
 * slices pinning a larger string.
 */
const CACHEABLE_UNITS = 16_384;
const MAX_CACHED_UNITS = 4 * 1024 * 1024;
/**
 * Each entry is charged this many units beyond its text, for the Map's own memory: without it, a
 * client sending millions of distinct two-letter texts could fill hundreds of MB within the bound.
 */
const ENTRY_UNITS = 32;

export class CountCache {
  private readonly counts = new Map<string, number>();
  private units = 0;

  constructor(
    private readonly maxUnits = MAX_CACHED_UNITS,
    private readonly cacheableUnits = CACHEABLE_UNITS,
  ) {}

  get(text: string): number | undefined {
    const n = this.counts.get(text);
    if (n === undefined) return undefined;
    // Most recently used last: a Map iterates in insertion order.
    this.counts.delete(text);
    this.counts.set(text, n);
    return n;
  }

  set(text: string, n: number): void {
    if (text.length > this.cacheableUnits || this.counts.has(text)) return;
    this.counts.set(text, n);
    this.units += text.length + ENTRY_UNITS;
    for (const old of this.counts.keys()) {
      if (this.units <= this.maxUnits) break;
      this.counts.delete(old);
      this.units -= old.length + ENTRY_UNITS;
    }
  }

  get size(): number {
    return this.counts.size;
  }

  /** UTF-16 units held, each entry's ENTRY_UNITS included (the bound's measure). */
  get heldUnits(): number {
    return this.units;
  }

  clear(): void {
    this.counts.clear();
    this.units = 0;
  }
}

const cache = new CountCache();

/** The count cache's entries (tests), and a way to empty it. */
export const countCache = { size: () => cache.size, clear: () => cache.clear() };

export function countTextTokens(text: string, budget: CountBudget = new CountBudget()): number {
  if (text === "") return 0;
  if (budget.left >= text.length) {
    const known = cache.get(text);
    if (known !== undefined) {
      budget.tokens += known;
      budget.units += text.length;
      budget.left -= text.length;
      return known;
    }
  }
  const whole = budget.left >= text.length;
  const n = countPieces(text, budget);
  if (whole) cache.set(text, n);
  return n;
}

function countPieces(text: string, budget: CountBudget): number {
  const count = encoder();
  let n = 0;
  let start = 0;
  while (start < text.length) {
    if (budget.left <= 0) {
      const rest = text.slice(start);
      const rate = budget.units > 0 ? budget.tokens / budget.units : 0;
      return n + Math.ceil(Math.max(rate * rest.length, Buffer.byteLength(rest, "utf8") / 4));
    }
    const end = text.length - start <= CHUNK ? text.length : pieceEnd(text, start);
    const tokens = count(start === 0 && end === text.length ? text : text.slice(start, end), AS_TEXT);
    n += tokens;
    budget.tokens += tokens;
    budget.units += end - start;
    budget.left -= end - start;
    start = end;
  }
  return n;
}

/** Loads the encoder now: call once at start, off the request path. */
export function warmUpTokenCounter(): void {
  countTextTokens("warm up");
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Adds a content's text tokens to the count, and its image parts to `images` (image-tokens.ts). */
function contentTokens(content: unknown, budget: CountBudget, images: PromptImage[]): number {
  if (typeof content === "string") return countTextTokens(content, budget);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const part of content) {
    if (!isObject(part)) continue;
    if (typeof part.text === "string") {
      n += countTextTokens(part.text, budget);
      continue;
    }
    const image = promptImageOf(part);
    if (image !== null) images.push(image);
    else n += countTextTokens(JSON.stringify(part), budget); // audio, files: their encoded size, a generous bound
  }
  return n;
}

/**
 * A chat request's prompt, counted once: the tokens of its text, and its images, whose tokens
 * depend on the provider's rule (promptTokensFor).
 */
export interface PromptEstimate {
  textTokens: number;
  images: readonly PromptImage[];
}

/**
 * Each message's role, name, content and tool calls plus TOKENS_PER_MESSAGE, the reply priming,
 * and the tool definitions (as JSON, which counts a little more than the upstream's own rendering
 * of them). Unknown shapes count as 0 rather than throwing: the request was validated before, and
 * this must never fail a request.
 */
export function estimatePrompt(messages: readonly unknown[], tools?: readonly unknown[]): PromptEstimate {
  const budget = new CountBudget();
  const images: PromptImage[] = [];
  let n = REPLY_PRIMING_TOKENS;
  for (const m of messages) {
    if (!isObject(m)) continue;
    n += TOKENS_PER_MESSAGE;
    if (typeof m.role === "string") n += countTextTokens(m.role, budget);
    if (typeof m.name === "string") n += countTextTokens(m.name, budget) + 1;
    n += contentTokens(m.content, budget, images);
    if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0)
      n += countTextTokens(JSON.stringify(m.tool_calls), budget);
    if (typeof m.tool_call_id === "string") n += countTextTokens(m.tool_call_id, budget);
  }
  if (tools && tools.length > 0) n += countTextTokens(JSON.stringify(tools), budget);
  return { textTokens: n, images };
}

/** The estimate's prompt tokens under one provider's image rule. */
export function promptTokensFor(e: PromptEstimate, rule: ImageRule = "openai"): number {
  let n = e.textTokens;
  for (const image of e.images) n += imageTokens(image, rule);
  return n;
}

/**
 * An estimate of a chat request's prompt tokens (estimatePrompt), images counted by `rule`
 * (OpenAI's unless said).
 */
export function countPromptTokens(
  messages: readonly unknown[],
  tools?: readonly unknown[],
  rule: ImageRule = "openai",
): number {
  return promptTokensFor(estimatePrompt(messages, tools), rule);
}
