/**
 * The Broadcast encoder port: a destination type is data (its config fields, in
 * domain/destinations/destination-types.ts) plus one encoder that turns a batch of generations
 * into the HTTP requests its product's ingestion API documents. Encoders are pure: no I/O, no
 * clock, no randomness (ids derive from the generation), so a retry or a replay sends the same
 * bytes and the product's idempotency keys hold.
 */

/** A chat message as the gateway received it (content may be a string or parts). */
export interface BroadcastMessage {
  role: string;
  content: unknown;
  [field: string]: unknown;
}

/**
 * One generation as Broadcast sees it. Fields are an allowlist: nothing else (no API key, no
 * BYOK credential, no destination secret) can reach a payload. Optional groups are present only
 * when the destination's flags ask for them.
 */
export interface BroadcastGeneration {
  id: string;
  /** Milliseconds since the epoch, UTC: when the request started. */
  createdAtMs: number;
  model: string;
  provider: string;
  finishReason: string | null;
  tokensPrompt: number;
  tokensCompletion: number;
  tokensCached: number;
  tokensReasoning: number;
  /** Time to first token and total time, milliseconds. */
  latencyMs: number;
  generationTimeMs: number | null;
  streamed: boolean;
  cancelled: boolean;
  isByok: boolean;
  /**
   * The API surface it came through (chat, responses, messages, embeddings); absent or null for
   * an ingested record that does not say.
   */
  api?: string | null;
  /** Request parameters the client sent (temperature, max_tokens, top_p, ...), when known. */
  params: Record<string, number | string | boolean> | null;
  /** The client's `trace` object (trace_id, trace_name, span_name, generation_name, ...). */
  trace: Record<string, string> | null;
  /** Provider attempts the gateway made, in order (the last one served the answer). */
  attempts: { provider: string; model: string; status: number | null; durationMs: number }[];
  /** broadcast_generation_cost: USD amounts. */
  cost: { totalUsd: number; promptUsd: number | null; completionUsd: number | null; byokUsd: number } | null;
  /** broadcast_generation_identity: who made the request. */
  identity: {
    apiKeyName: string | null;
    apiKeyHashPrefix: string;
    userId: string | null;
    externalUser: string | null;
  } | null;
  /** broadcast_generation_request_context: where it came from. */
  requestContext: { appTitle: string | null; referer: string | null; sessionId: string | null } | null;
  /** Absent in privacy mode, and for generations whose content was not kept. */
  content: { input: BroadcastMessage[]; output: string | null } | null;
}

/** One HTTP request to send. */
export interface EncodedRequest {
  method: "POST" | "PUT";
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
  /**
   * The generations this request carries when it carries only part of the batch (a batch split
   * by size, one object per generation). Absent: every generation of the batch needs it (one
   * body, or a step such as CREATE TABLE before the insert). The delivery worker settles each
   * generation by the requests that carry it, so a body the receiver refuses (too large) does not
   * fail the generations of the other bodies.
   */
  generationIds?: readonly string[];
}

export interface DestinationEncoder<Config = Record<string, unknown>> {
  /** Most generations one request may carry (the product's documented batch limit). */
  readonly maxBatch: number;
  /** The requests that deliver this batch, in order; config holds decrypted secrets. */
  encode(batch: readonly BroadcastGeneration[], config: Config): EncodedRequest[];
  /** The request the destination's connection test sends (an empty payload for OTLP types). */
  testRequest(config: Config): EncodedRequest;
  /**
   * For types whose authentication needs the clock (S3's SigV4): the delivery worker calls this
   * with the current time just before sending each request (batch and test alike) and sends what
   * it returns. Types without it send their requests as encoded.
   */
  sign?(request: EncodedRequest, config: Config, now: Date): Promise<EncodedRequest>;
}
