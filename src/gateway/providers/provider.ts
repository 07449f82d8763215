import type { CancelSignal } from "../cancellation.js";

/**
 * The provider port: one small interface that every upstream wire format implements
 * (OpenAI-compatible, Anthropic Messages, the built-in mock). Adapters translate to and from the
 * OpenAI chat-completions shape, which is what the gateway speaks to its clients; the gateway
 * never sees a provider's native format.
 */

/** A chat request in the OpenAI shape, as the gateway forwards it (router extras removed). */
export interface ChatRequestBody {
  messages: unknown[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stop?: string | string[] | null;
  tools?: unknown[];
  tool_choice?: unknown;
  /** Every other OpenAI field the client sent is passed through unchanged. */
  [field: string]: unknown;
}

/**
 * Token counts as the upstream reported them (or as counted when it reported none), in OpenAI's
 * convention whatever the upstream's: `promptTokens` counts every prompt token, the cache reads
 * (`cachedTokens`) and writes (`cacheWriteTokens`) among them; `completionTokens` counts the
 * reasoning (`reasoningTokens`) among them. A count the upstream did not report is 0.
 */
export interface ProviderUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

/** One choice of a finished (non-streamed) answer, in the OpenAI shape. */
export interface ProviderChoice {
  index: number;
  message: {
    role: "assistant";
    content: string | null;
    tool_calls?: unknown[];
    reasoning?: string | null;
    /** Structured reasoning (signed or encrypted thinking a client sends back on its next turn). */
    reasoning_details?: unknown[];
    /** The model's refusal, when it declined (OpenAI's structured outputs). */
    refusal?: string | null;
  };
  finish_reason: string | null;
  /** The tokens' log probabilities, when the request asked for them (`logprobs: true`). */
  logprobs?: Record<string, unknown>;
}

export interface ProviderCompletion {
  /** The upstream's own id for the answer, when it gave one. */
  upstreamId: string | null;
  choices: ProviderChoice[];
  /** null when the upstream reported no usage: the gateway counts tokens itself. */
  usage: ProviderUsage | null;
}

/** One streamed piece, in the OpenAI chunk shape (choices may be empty on a usage-only chunk). */
export interface ProviderChunk {
  upstreamId: string | null;
  choices: {
    index: number;
    delta: Record<string, unknown>;
    finish_reason: string | null;
    logprobs?: Record<string, unknown>;
  }[];
  usage: ProviderUsage | null;
  /**
   * The prompt's tokens as the upstream reported them before its final usage (Anthropic's
   * message_start), on the first chunk after: what a stream cut short before that usage is charged
   * for its prompt, instead of Gatehouse's estimate. Its completion is counted.
   */
  prompt?: Pick<ProviderUsage, "promptTokens" | "cachedTokens" | "cacheWriteTokens">;
}

/** The request fields an OpenAI-compatible upstream may take the completion cap in. */
export const MAX_TOKENS_FIELDS = ["max_tokens", "max_completion_tokens"] as const;
export type MaxTokensField = (typeof MAX_TOKENS_FIELDS)[number];

export interface UpstreamCall {
  /** The model id the upstream knows (the catalog's `upstream_model`). */
  upstreamModel: string;
  body: ChatRequestBody;
  /** Deadline for the upstream's first byte; the stream itself may run longer. */
  timeoutMs: number;
  /**
   * The endpoint's maximum completion tokens (the catalog's `max_completion_tokens`). Adapters
   * whose API requires a limit (Anthropic's `max_tokens`) send it when the request has none.
   */
  maxCompletionTokens?: number;
  /** The organization's own credential (BYOK) to use instead of the provider's configured one. */
  apiKey?: string;
  /**
   * The request as the client sent it, when it speaks this provider's own API (the Messages API
   * to an `anthropic` provider, the Responses API to an `openai-compatible` one that declares
   * `responses: true`): the adapter forwards it as sent (cache_control, signed thinking, blocks
   * and fields the chat shape has no place for), setting only the model, the completion cap the
   * hold reserved (`body`'s) and `stream`. `body` still holds the translation, for everything the
   * gateway itself reads (the prompt estimate, counting, Broadcast).
   */
  native?: NativeRequest;
}

/**
 * The APIs a request can be forwarded in as sent: Anthropic's Messages API, OpenAI's Responses
 * API. Which providers speak which is the catalog's to say (speaksNative in catalog.ts).
 */
export type NativeKind = "anthropic" | "openai-responses";

/** A client's request in a provider's own API (UpstreamCall.native). */
export interface NativeRequest {
  kind: NativeKind;
  body: Record<string, unknown>;
  /** Headers of the client's to pass on (anthropic-beta). */
  headers: Record<string, string>;
}

/**
 * What to embed, as OpenAI's embeddings API takes it: one text, several, one list of token ids,
 * or several. Each text or token list is one vector of the answer, in order.
 */
export type EmbeddingInput = string | readonly string[] | readonly number[] | readonly (readonly number[])[];

/** The input's items, one per vector: a text, or a list of token ids (a flat list is one). */
export function embeddingItems(input: EmbeddingInput): readonly (string | readonly number[])[] {
  if (typeof input === "string") return [input];
  if (input.length > 0 && typeof input[0] === "number") return [input as readonly number[]];
  return input as readonly (string | readonly number[])[];
}

/** An embeddings request as the gateway forwards it (router extras removed). */
export interface EmbedCall {
  /** The model id the upstream knows (the catalog's `upstream_model`). */
  upstreamModel: string;
  input: EmbeddingInput;
  /** The vectors' length, for models that can shorten them (OpenAI's text-embedding-3). */
  dimensions?: number;
  /** What the input is for, for models that embed queries and documents differently (`search_query`). */
  inputType?: string;
  /** The client's end-user id, forwarded as OpenAI's `user`. */
  user?: string;
  /** Deadline for the upstream's first byte. */
  timeoutMs: number;
  /** The organization's own credential (BYOK) to use instead of the provider's configured one. */
  apiKey?: string;
}

/**
 * The upstream's vectors, one per input in input order. Float32Array: what embedding models
 * compute and what a base64 answer carries (little-endian float32), at half the memory of number
 * arrays (2,048 vectors of 3,072 dimensions: 25 MB instead of 50). A JSON number from an upstream
 * is rounded to float32, which loses nothing such a model produced.
 */
export interface ProviderEmbedding {
  /** The upstream's own id for the answer, when it gave one. */
  upstreamId: string | null;
  vectors: Float32Array[];
  /** null when the upstream reported no usage: the gateway counts the input itself. */
  usage: { promptTokens: number } | null;
}

/**
 * A failed upstream call. `status` is the upstream's HTTP status, or null when there was none
 * (connection refused or reset, timeout, malformed answer). `retryable` says whether trying the
 * next model or provider makes sense (429, 5xx, timeout, connection failure).
 */
export class UpstreamError extends Error {
  /**
   * The request had been written on a connection to the provider when the call failed (set by the
   * transport, upstream-http.ts, and the mock): the provider has the prompt, and bills it. False
   * when it failed before that (a refused connection, a wait for a pooled connection that ran out).
   */
  sent = false;

  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

/**
 * An upstream that kept silent past a deadline: no first byte within the call's `timeoutMs`
 * (`first-byte`: the provider's `timeout_ms`, else GATEHOUSE_UPSTREAM_TIMEOUT_MS), or silence
 * between two chunks past the provider's `idle_timeout_ms` once the answer had started (`idle`).
 * Retryable: before the first byte reaches the client the gateway tries the next attempt; a
 * first-byte timeout on the last attempt answers 524. Every adapter raises this one type, so the
 * gateway recognises a timeout whatever the wire format.
 */
export class UpstreamTimeout extends UpstreamError {
  constructor(
    readonly phase: "first-byte" | "idle",
    readonly timeoutMs: number,
  ) {
    super(
      phase === "first-byte"
        ? `upstream sent nothing within ${timeoutMs} ms`
        : `upstream went silent for ${timeoutMs} ms mid-answer`,
      null,
      true,
    );
    this.name = "UpstreamTimeout";
  }
}

/**
 * The call stopped on its signal: the client went away (a stream's), or a shutdown's grace ran
 * out. Not retryable: the caller asked to stop.
 */
export class UpstreamCancelled extends UpstreamError {
  constructor(message = "upstream request cancelled") {
    super(message, null, false);
    this.name = "UpstreamCancelled";
  }
}

/**
 * A call given up on after its request reached the provider, without an answer: cancelled on its
 * signal, or timed out waiting for it. The provider has the prompt and bills it: the gateway
 * charges the attempt at least its prompt (docs/gateway.md "What abandoned requests cost").
 */
export function abandonedAfterSending(err: UpstreamError): err is UpstreamCancelled | UpstreamTimeout {
  return err.sent && (err instanceof UpstreamCancelled || err instanceof UpstreamTimeout);
}

export interface ProviderAdapter {
  /** A whole answer. Throws UpstreamError. */
  complete(call: UpstreamCall, signal: CancelSignal): Promise<ProviderCompletion>;
  /**
   * A stream of chunks. A failure before the first chunk throws UpstreamError from the first
   * iteration; a failure later throws UpstreamError from the iteration where it happened. Aborting
   * `signal` cancels the upstream request.
   */
  stream(call: UpstreamCall, signal: CancelSignal): AsyncIterable<ProviderChunk>;
  /**
   * Embeddings, for adapters whose wire format has them (OpenAI-compatible, the mock; not
   * Anthropic's, which has no embeddings API: the gateway refuses such an endpoint). Throws
   * UpstreamError, including for an answer whose vectors do not match the input's count.
   */
  embed?(call: EmbedCall, signal: CancelSignal): Promise<ProviderEmbedding>;
  /** Releases pooled connections (at shutdown). Adapters without any may omit it. */
  close?(): Promise<void>;
}
