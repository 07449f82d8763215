import { contentText } from "./content-text.js";
import { countPromptTokens, countTextTokens } from "../tokens/count-tokens.js";
import { countEmbeddingTokens } from "../tokens/embedding-tokens.js";
import { MOCK_EMBED_DIMENSIONS, MOCK_EMBED_MAX_DIMENSIONS, mockVector } from "./mock-embed.js";
import {
  UpstreamCancelled,
  UpstreamError,
  UpstreamTimeout,
  type EmbedCall,
  type ProviderAdapter,
  type ProviderChunk,
  type ProviderCompletion,
  type ProviderEmbedding,
  type UpstreamCall,
  embeddingItems,
} from "./provider.js";
import type { CancelSignal } from "../cancellation.js";

/**
 * The built-in mock provider: no network, deterministic. `echo` answers "Echo: <last user text>",
 * cut at a word boundary to fit max_tokens (finish_reason "length" when cut); usage is counted
 * from the text with the gateway's own token counter (tokens/count-tokens.ts); a stream comes in several chunks. `unavailable` always fails with a
 * retryable 503 (for fallback demos and tests). `embed` gives deterministic vectors (mock-embed.ts:
 * the same text, the same vector; 8 dimensions unless `dimensions` says otherwise), its usage
 * counted as the gateway counts an embeddings input (tokens/embedding-tokens.ts).
 *
 * A user message may steer the mock for tests and demos with a directive anywhere in its text:
 * `[[mock chunks=20 chunk_delay_ms=50]]` (stream pacing), `[[mock fail=500]]` (fail before any
 * output), `[[mock fail_after=3]]` (a stream that breaks after 3 chunks). Directives are not
 * echoed. An embeddings text may hold `[[mock fail=…]]` as well.
 */
export interface MockOptions {
  /** Delay before the first chunk (or the whole answer) and between chunks. */
  latencyMs: number;
}

const DIRECTIVE_RE = /\[\[mock([^\]]*)\]\]/g;

interface Directives {
  chunks: number;
  chunkDelayMs: number;
  fail: number | null;
  failAfter: number | null;
}

function lastUserText(messages: readonly unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown };
    if (m.role === "user") return contentText(m.content);
  }
  return "";
}

function directivesOf(text: string): Directives {
  const d: Directives = { chunks: 4, chunkDelayMs: 0, fail: null, failAfter: null };
  for (const m of text.matchAll(DIRECTIVE_RE)) {
    for (const [, k, v] of (m[1] ?? "").matchAll(/(\w+)=(\d+)/g)) {
      const n = Math.min(Number(v), 1_000_000);
      if (k === "chunks") d.chunks = Math.max(1, Math.min(n, 10_000));
      else if (k === "chunk_delay_ms") d.chunkDelayMs = Math.min(n, 60_000);
      else if (k === "fail") d.fail = n;
      else if (k === "fail_after") d.failAfter = n;
    }
  }
  return d;
}

interface Reply {
  text: string;
  finishReason: "stop" | "length";
  promptTokens: number;
  completionTokens: number;
  directives: Directives;
}

/** The reply, cut so that its token count stays within max_tokens. */
function replyTo(call: UpstreamCall): Reply {
  const user = lastUserText(call.body.messages);
  const directives = directivesOf(user);
  const full = `Echo: ${user.replace(DIRECTIVE_RE, "").replace(/\s+/g, " ").trim()}`.trim();
  const max = call.body.max_tokens ?? call.body.max_completion_tokens ?? null;
  let text = full;
  let finishReason: Reply["finishReason"] = "stop";
  if (max !== null && countTextTokens(text) > max) {
    // The longest whole-word prefix within max tokens (binary search: counting is linear).
    const words = full.split(" ");
    let lo = 0;
    let hi = words.length - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (countTextTokens(words.slice(0, mid).join(" ")) <= max) lo = mid;
      else hi = mid - 1;
    }
    text = words.slice(0, lo).join(" ");
    finishReason = "length";
  }
  return {
    text,
    finishReason,
    promptTokens: countPromptTokens(call.body.messages, call.body.tools),
    completionTokens: countTextTokens(text),
    directives,
  };
}

const aborted = () => new UpstreamCancelled("request cancelled");

const sent = <E extends UpstreamError>(err: E): E => {
  err.sent = true;
  return err;
};

/**
 * Waits `ms`, or fails on the signal. The mock takes a request at once, as an upstream on an open
 * connection does: a cancellation while it waits is one after sending (UpstreamError.sent); a
 * signal that had fired before is not.
 */
function sleep(ms: number, signal: CancelSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(aborted());
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(sent(aborted()));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The mock's first byte after `latencyMs`, under the call's first-byte deadline as a real
 * upstream's: a latency past the deadline waits the deadline, then fails with UpstreamTimeout
 * (after sending: the mock has the request).
 */
async function firstByte(
  latencyMs: number,
  call: { timeoutMs: number },
  signal: CancelSignal,
): Promise<void> {
  if (latencyMs < call.timeoutMs) return sleep(latencyMs, signal);
  await sleep(call.timeoutMs, signal);
  throw sent(new UpstreamTimeout("first-byte", call.timeoutMs));
}

/** Splits text into n pieces of nearly equal length (fewer when the text is shorter). */
function pieces(text: string, n: number): string[] {
  if (text.length === 0) return [""];
  const size = Math.ceil(text.length / Math.min(n, text.length));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

let counter = 0;
const upstreamId = () => `mock-${Date.now().toString(36)}-${(counter++).toString(36)}`;

export class MockAdapter implements ProviderAdapter {
  constructor(
    private readonly opts: MockOptions,
    /** Model behaviours by upstream model name. */
    private readonly failing: ReadonlySet<string> = new Set(["unavailable"]),
  ) {}

  private failure(upstreamModel: string, d: Directives): UpstreamError | null {
    if (this.failing.has(upstreamModel)) return new UpstreamError("mock provider unavailable", 503, true);
    if (d.fail !== null) {
      const retryable = d.fail === 429 || d.fail >= 500;
      return new UpstreamError(`mock provider failed with ${d.fail}`, d.fail, retryable);
    }
    return null;
  }

  async complete(call: UpstreamCall, signal: CancelSignal): Promise<ProviderCompletion> {
    const r = replyTo(call);
    await firstByte(this.opts.latencyMs, call, signal);
    const f = this.failure(call.upstreamModel, r.directives);
    if (f) throw f;
    return {
      upstreamId: upstreamId(),
      choices: [{ index: 0, message: { role: "assistant", content: r.text }, finish_reason: r.finishReason }],
      usage: {
        promptTokens: r.promptTokens,
        completionTokens: r.completionTokens,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
      },
    };
  }

  /**
   * Vectors for the `embed` model; any other model of the mock is a chat model, and a 404 as an
   * upstream would answer (the gateway refuses such a request before it gets here).
   */
  async embed(call: EmbedCall, signal: CancelSignal): Promise<ProviderEmbedding> {
    const items = embeddingItems(call.input);
    const texts = items.filter((x): x is string => typeof x === "string").join("\n");
    await firstByte(this.opts.latencyMs, call, signal);
    const f =
      this.failure(call.upstreamModel, directivesOf(texts)) ??
      (call.upstreamModel === "embed"
        ? null
        : new UpstreamError(`mock model ${call.upstreamModel} does not embed`, 404, false));
    if (f) throw f;
    const dimensions = call.dimensions ?? MOCK_EMBED_DIMENSIONS;
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MOCK_EMBED_MAX_DIMENSIONS)
      throw new UpstreamError(`mock embed: dimensions must be 1 to ${MOCK_EMBED_MAX_DIMENSIONS}`, 400, false);
    return {
      upstreamId: upstreamId(),
      vectors: items.map((x) => mockVector(x, dimensions)),
      usage: { promptTokens: countEmbeddingTokens(call.input).total },
    };
  }

  async *stream(call: UpstreamCall, signal: CancelSignal): AsyncIterable<ProviderChunk> {
    const r = replyTo(call);
    const id = upstreamId();
    await firstByte(this.opts.latencyMs, call, signal);
    const f = this.failure(call.upstreamModel, r.directives);
    if (f) throw f;
    const parts = pieces(r.text, r.directives.chunks);
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) await sleep(Math.max(this.opts.latencyMs, r.directives.chunkDelayMs), signal);
      if (r.directives.failAfter !== null && i >= r.directives.failAfter) {
        throw new UpstreamError("mock provider disconnected mid-stream", null, true);
      }
      const last = i === parts.length - 1;
      yield {
        upstreamId: id,
        choices: [
          {
            index: 0,
            delta: i === 0 ? { role: "assistant", content: parts[i] } : { content: parts[i] },
            finish_reason: last ? r.finishReason : null,
          },
        ],
        usage: null,
      };
    }
    yield {
      upstreamId: id,
      choices: [],
      usage: {
        promptTokens: r.promptTokens,
        completionTokens: r.completionTokens,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
      },
    };
  }
}
