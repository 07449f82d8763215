import { base64ToFloat32 } from "../../../lib/float32-base64.js";
import type { CancelSignal } from "../../cancellation.js";
import { malformed } from "../malformed.js";
import { embeddingItems, type EmbedCall, type ProviderEmbedding } from "../provider.js";
import {
  readWholeBody,
  sendUpstream,
  sentCredentials,
  withoutSecrets,
  type UpstreamPool,
} from "../upstream-http.js";
import { inBandError, isObject, parseJson } from "./openai-json.js";

/**
 * OpenAI's embeddings wire format: POST {base}/embeddings with the same key, headers, connection
 * pool, deadlines and error mapping as the provider's chat completions (upstream-http.ts). The
 * upstream is always asked for `encoding_format: "float"`, which every OpenAI-compatible server
 * takes (some have no base64); an answer in base64 (little-endian float32, as OpenAI sends it when
 * asked) is read too. What the client asked for is Gatehouse's to encode.
 */
export interface EmbeddingsEndpoint {
  url: string;
  apiKey: string | null;
  headers?: Record<string, string>;
}

/** The body sent upstream: the upstream model, the input, and only the options the client set. */
export function embeddingsBody(call: EmbedCall): Record<string, unknown> {
  return {
    model: call.upstreamModel,
    input: call.input,
    encoding_format: "float",
    ...(call.dimensions !== undefined ? { dimensions: call.dimensions } : {}),
    ...(call.inputType !== undefined ? { input_type: call.inputType } : {}),
    ...(call.user !== undefined ? { user: call.user } : {}),
  };
}

export async function openAIEmbed(
  pool: UpstreamPool,
  endpoint: EmbeddingsEndpoint,
  call: EmbedCall,
  signal: CancelSignal,
): Promise<ProviderEmbedding> {
  // The organization's own key (BYOK) when the attempt has one, else the provider's.
  const apiKey = call.apiKey ?? endpoint.apiKey;
  try {
    const exchange = await sendUpstream(
      pool,
      {
        url: endpoint.url,
        headers: {
          ...endpoint.headers,
          "content-type": "application/json",
          accept: "application/json",
          ...(apiKey !== null ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify(embeddingsBody(call)),
        firstByteTimeoutMs: call.timeoutMs,
      },
      signal,
    );
    const count = embeddingItems(call.input).length;
    return parseEmbeddings(await readWholeBody(exchange), count, call.dimensions);
  } catch (err) {
    throw withoutSecrets(err, sentCredentials(call, endpoint));
  }
}

/**
 * An embeddings answer: `data` of `{embedding, index}` (numbers or base64), put in `index` order
 * when every item has one; exactly `count` vectors, each non-empty and finite, all of one length,
 * and that length `dimensions` when it was asked for (a provider that ignores it would hand the
 * client vectors its index cannot hold). Anything else is a malformed answer (retryable: another
 * provider may answer well). `usage.prompt_tokens` (else `total_tokens`) is the prompt's count.
 */
export function parseEmbeddings(text: string, count: number, dimensions?: number): ProviderEmbedding {
  const o = parseJson(text, false);
  const error = inBandError(o, false);
  if (error) throw error;
  if (!Array.isArray(o.data)) throw malformed("no data list", false);
  const items = o.data.map((d: unknown, i) => {
    if (!isObject(d)) throw malformed(`data[${i}] is not an object`, false);
    return {
      index: Number.isInteger(d.index) ? (d.index as number) : null,
      vector: vectorOf(d.embedding, i),
    };
  });
  if (items.length !== count)
    throw malformed(`${items.length} embeddings for ${count} input${count === 1 ? "" : "s"}`, false);
  if (items.every((x) => x.index !== null)) {
    items.sort((a, b) => (a.index as number) - (b.index as number));
    if (items.some((x, i) => x.index !== i)) throw malformed("data indexes are not 0 to n-1", false);
  }
  const vectors = items.map((x) => x.vector);
  const length = vectors[0]?.length;
  if (vectors.some((v) => v.length !== length)) throw malformed("embeddings of different lengths", false);
  if (dimensions !== undefined && length !== undefined && length !== dimensions)
    throw malformed(`embeddings of ${length} dimensions, ${dimensions} asked for`, false);
  return { upstreamId: typeof o.id === "string" ? o.id : null, vectors, usage: promptTokensOf(o.usage) };
}

function vectorOf(embedding: unknown, i: number): Float32Array {
  let v: Float32Array | null = null;
  if (typeof embedding === "string") v = base64ToFloat32(embedding);
  else if (Array.isArray(embedding) && embedding.every((x) => typeof x === "number" && Number.isFinite(x)))
    v = Float32Array.from(embedding as number[]);
  if (v === null || v.length === 0)
    throw malformed(`data[${i}].embedding is not a list of numbers or base64 float32`, false);
  // A finite double past float32's range becomes Infinity: not a vector a client can use.
  if (!v.every(Number.isFinite)) throw malformed(`data[${i}].embedding has values past float32`, false);
  return v;
}

function promptTokensOf(u: unknown): { promptTokens: number } | null {
  if (!isObject(u)) return null;
  const n = typeof u.prompt_tokens === "number" ? u.prompt_tokens : u.total_tokens;
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? { promptTokens: Math.round(n) } : null;
}
