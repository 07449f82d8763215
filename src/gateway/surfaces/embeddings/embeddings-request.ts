import { invalid, type DomainError } from "../../../domain/errors.js";
import type { ProviderPrefs } from "../../chat/attempts.js";
import { isObject } from "../../../lib/json-object.js";

/**
 * POST /embeddings' body (docs/surfaces/embeddings.md "Request"), checked and normalised; every
 * problem is a 400 naming the field with its path (`input[2].content[0].type: …`). The input
 * becomes one item per vector: texts, or lists of token ids (one string is one text, one flat
 * list of numbers one token list). Fields other than those below are ignored, never forwarded.
 */
export type EmbeddingEncoding = "float" | "base64";

export interface EmbeddingsRequest {
  model: string;
  /** One item per vector, in order; never empty, never mixed. */
  input: readonly string[] | readonly (readonly number[])[];
  /** How the answer carries the vectors: numbers, or base64 of little-endian float32. */
  encoding: EmbeddingEncoding;
  dimensions: number | null;
  inputType: string | null;
  user: string | null;
  provider: ProviderPrefs | null;
  /** Groups requests in records and Broadcast; never sent to the provider. */
  sessionId: string | null;
}

/** OpenAI's limit on inputs per request, kept by the hosted original. */
export const MAX_EMBEDDING_INPUTS = 2048;
/**
 * One text's most UTF-16 units: 128 Ki, four per token for 32,768 tokens of English prose, the
 * longest context of today's embedding models (OpenAI's take 8,192), so no text an upstream could
 * embed is refused, while one input cannot be a whole body's worth of text.
 */
export const MAX_TEXT_UNITS = 131_072;
/** One token list's most ids: the same 32,768-token context. */
export const MAX_TOKEN_IDS = 32_768;
/** Token ids are vocabulary indexes: non-negative 32-bit integers. */
export const MAX_TOKEN_ID = 2_147_483_647;
export const MAX_DIMENSIONS = 65_536;
/** What the multimodal content list may carry besides text, none of which these providers embed. */
const MEDIA_PARTS = new Set(["image_url", "input_audio", "input_video", "input_file"]);

/** Absent: an optional field sent as null means the same as one left out. */
const absent = (v: unknown): v is null | undefined => v === undefined || v === null;

const fieldError = (field: string, problem: string): DomainError =>
  invalid(`${field}: ${problem}`, { field });

function optionalString(v: unknown, field: string, max: number): string | null {
  if (absent(v)) return null;
  if (typeof v !== "string" || v.length === 0) throw fieldError(field, "must be a non-empty string");
  if (v.length > max) throw fieldError(field, `must be at most ${max} characters`);
  return v;
}

export function embeddingsRequest(body: unknown): EmbeddingsRequest {
  if (!isObject(body)) throw fieldError("body", "must be a JSON object");
  if (absent(body.model)) throw fieldError("model", "required: the embedding model's id");
  if (typeof body.model !== "string" || body.model.length === 0 || body.model.length > 256)
    throw fieldError("model", "must be a model id of 1 to 256 characters");
  if (!absent(body.models))
    throw fieldError(
      "models",
      "not taken by embeddings: vectors of different models are not comparable, so there is no fallback model; name one in model",
    );
  // Broadcast's metadata: checked for its shape, as on chat; nothing here reads it.
  if (!absent(body.trace) && !isObject(body.trace)) throw fieldError("trace", "must be an object");
  return {
    model: body.model,
    input: inputOf(body.input),
    encoding: encodingOf(body.encoding_format),
    dimensions: dimensionsOf(body.dimensions),
    inputType: optionalString(body.input_type, "input_type", 256),
    user: optionalString(body.user, "user", 1024),
    provider: absent(body.provider) ? null : providerOf(body.provider),
    sessionId: optionalString(body.session_id, "session_id", 256),
  };
}

function encodingOf(v: unknown): EmbeddingEncoding {
  if (absent(v)) return "float";
  if (v !== "float" && v !== "base64") throw fieldError("encoding_format", 'must be "float" or "base64"');
  return v;
}

function dimensionsOf(v: unknown): number | null {
  if (absent(v)) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > MAX_DIMENSIONS)
    throw fieldError("dimensions", `must be an integer from 1 to ${MAX_DIMENSIONS}`);
  return v;
}

/** The router's provider preferences, checked for the shapes the attempt planner reads. */
function providerOf(v: unknown): ProviderPrefs {
  if (!isObject(v)) throw fieldError("provider", "must be an object");
  for (const k of ["order", "only", "ignore"]) {
    const list = v[k];
    if (absent(list)) continue;
    if (!Array.isArray(list) || list.length > 64)
      throw fieldError(`provider.${k}`, "must be a list of at most 64 provider slugs");
    list.forEach((s: unknown, i) => {
      if (typeof s !== "string" || s.length === 0 || s.length > 256)
        throw fieldError(`provider.${k}[${i}]`, "must be a provider slug or name");
    });
  }
  for (const k of ["allow_fallbacks", "require_parameters"])
    if (!absent(v[k]) && typeof v[k] !== "boolean") throw fieldError(`provider.${k}`, "must be a boolean");
  if (!absent(v.max_price) && !isObject(v.max_price))
    throw fieldError("provider.max_price", "must be an object");
  return v;
}

/**
 * Every form the hosted original takes: a string, a list of strings, a list of token ids, a list
 * of such lists, or a list of `{content: [parts]}` (the multimodal form). A content list's text
 * parts are joined with a newline into one text; its media parts (image_url, input_audio,
 * input_video, input_file) are refused: no provider here embeds them.
 */
function inputOf(v: unknown): string[] | number[][] {
  if (absent(v)) throw fieldError("input", "required: a string, a list of strings or of token ids");
  if (typeof v === "string") return [text(v, "input")];
  if (!Array.isArray(v)) throw fieldError("input", "must be a string or a list");
  if (v.length === 0) throw fieldError("input", "must not be empty");
  const first: unknown = v[0];
  if (typeof first === "number") return [tokens(v, "input")];
  if (v.length > MAX_EMBEDDING_INPUTS)
    throw fieldError("input", `at most ${MAX_EMBEDDING_INPUTS} inputs per request (${v.length} given)`);
  if (typeof first === "string") {
    return v.map((x: unknown, i) => {
      if (typeof x !== "string") throw fieldError(`input[${i}]`, "must be a string, as input[0] is");
      return text(x, `input[${i}]`);
    });
  }
  if (Array.isArray(first)) {
    return v.map((x: unknown, i) => {
      if (!Array.isArray(x)) throw fieldError(`input[${i}]`, "must be a list of token ids, as input[0] is");
      return tokens(x, `input[${i}]`);
    });
  }
  if (isObject(first)) {
    return v.map((x: unknown, i) => {
      if (!isObject(x)) throw fieldError(`input[${i}]`, "must be an object with content, as input[0] is");
      return contentText(x.content, `input[${i}].content`);
    });
  }
  throw fieldError("input[0]", "must be a string, a token id, a list of token ids or an object with content");
}

function text(s: string, field: string): string {
  if (s.length === 0) throw fieldError(field, "must not be empty (an empty text has no embedding)");
  if (s.length > MAX_TEXT_UNITS) throw fieldError(field, `must be at most ${MAX_TEXT_UNITS} characters`);
  return s;
}

function tokens(list: readonly unknown[], field: string): number[] {
  if (list.length === 0) throw fieldError(field, "must not be empty (no token ids, no embedding)");
  if (list.length > MAX_TOKEN_IDS) throw fieldError(field, `at most ${MAX_TOKEN_IDS} token ids`);
  list.forEach((t, i) => {
    if (typeof t !== "number" || !Number.isInteger(t) || t < 0 || t > MAX_TOKEN_ID)
      throw fieldError(`${field}[${i}]`, `must be a token id: an integer from 0 to ${MAX_TOKEN_ID}`);
  });
  return list as number[];
}

function contentText(content: unknown, field: string): string {
  if (!Array.isArray(content) || content.length === 0)
    throw fieldError(field, "must be a non-empty list of parts");
  const texts = content.map((part: unknown, j) => {
    const at = `${field}[${j}]`;
    if (!isObject(part)) throw fieldError(at, "must be an object with a type");
    if (part.type === "text") {
      if (typeof part.text !== "string") throw fieldError(`${at}.text`, "must be a string");
      return part.text;
    }
    if (typeof part.type === "string" && MEDIA_PARTS.has(part.type))
      throw fieldError(
        `${at}.type`,
        `"${part.type}" cannot be embedded here: this gateway's providers embed text only`,
      );
    throw fieldError(
      `${at}.type`,
      'must be "text" (image_url, input_audio, input_video and input_file are not embedded here)',
    );
  });
  return text(texts.join("\n"), field);
}
