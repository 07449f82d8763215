import { readFileSync } from "node:fs";
import { usdPerTokenToNanoPerMTok } from "../../lib/money.js";
import { Redacted } from "../../lib/redacted.js";
import { MAX_TOKENS_FIELDS, type MaxTokensField } from "../providers/provider.js";
import { MODEL_KINDS, type ModelKind } from "./model-kind.js";
import { canonical, isParameter, PARAMETERS, type Parameter } from "./parameters.js";
import { DATA_REGIONS, type DataRegion } from "../../domain/guardrails/guardrail-policy.js";

/**
 * The providers file (GATEHOUSE_PROVIDERS_FILE): which upstreams this installation forwards to
 * and which models each serves at what price. Read and validated once at start, every problem
 * reported together, each naming its field (`models[0].prompt_price: required`). The result is
 * plain data; file-providers.ts turns it into adapters. Secrets (api_key, the variable named by
 * api_key_env, headers) are held as Redacted and never printed.
 *
 * Prices are USD per token, converted exactly to nano-USD per million tokens. A model without
 * both prices cannot be configured (cost is never silently zero); an explicit 0 is accepted for
 * a model that costs nothing to run (a local Ollama), since it was written on purpose. A chat
 * model may also price its cache: `cache_read_price` (cached prompt tokens read) and
 * `cache_write_price` (prompt tokens written to the cache), optional, validated as the others;
 * without them those tokens cost the prompt price.
 *
 * A model's `kind` is `chat` (the default) or `embedding`. An embedding model has a prompt price
 * and a context length (each input's bound); it produces no completion and reads no prompt
 * cache, so `completion_price`, `cache_read_price`, `cache_write_price`, `max_completion_tokens`
 * and `supported_parameters` (chat's vocabulary) do not apply and are refused, like any field
 * that would be silently ignored. One id is one kind on every provider.
 */
export const PROVIDER_KINDS = ["openai-compatible", "anthropic"] as const;
export type FileProviderKind = (typeof PROVIDER_KINDS)[number];

export interface ProviderSpec {
  slug: string;
  kind: FileProviderKind;
  name: string;
  baseUrl: string;
  apiKey: Redacted | null;
  headers: Redacted<Record<string, string>>;
  /** First-byte deadline for this provider; null = the gateway's default. */
  timeoutMs: number | null;
  /** Silence allowed between chunks once an answer has started; null = the adapter's default. */
  idleTimeoutMs: number | null;
  /** openai-compatible: the field that carries the completion cap; null = as the client sent it. */
  maxTokensField: MaxTokensField | null;
  /** The provider's connection pool; null = the default (128). */
  connections: number | null;
  /** Where the provider processes requests (guardrails' allowed_data_regions); default global. */
  dataRegion: DataRegion;
  /** The provider keeps no prompts or completions (guardrails' enforce_zdr_*); default false. */
  zdr: boolean;
  /**
   * openai-compatible: it also serves OpenAI's Responses API ({base}/responses), to which
   * Responses requests are forwarded as sent instead of translated to chat; default false.
   */
  responses: boolean;
}

export interface ModelSpec {
  id: string;
  name: string;
  kind: ModelKind;
  provider: string;
  upstreamModel: string;
  promptPricePerMTokNano: bigint;
  /** 0 for an embedding model (no completion). */
  completionPricePerMTokNano: bigint;
  /** Cached prompt tokens read, and prompt tokens written to the cache; null: not given (the prompt price). */
  cacheReadPricePerMTokNano: bigint | null;
  cacheWritePricePerMTokNano: bigint | null;
  contextLength: number;
  /** 0 for an embedding model (no completion). */
  maxCompletionTokens: number;
  /** The request parameters this endpoint honours; null = its provider kind's defaults. */
  supportedParameters: Parameter[] | null;
}

export interface ProvidersFileSpec {
  path: string;
  providers: ProviderSpec[];
  models: ModelSpec[];
}

export class ProvidersFileError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid providers file:\n  - ${problems.join("\n  - ")}`);
    this.name = "ProvidersFileError";
  }
}

type Env = Record<string, string | undefined>;
type Json = Record<string, unknown>;

/** The built-in mock provider's slug: a file cannot take it. */
export const RESERVED_SLUGS = new Set(["mock"]);
const SLUG = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*\/[A-Za-z0-9._:/-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** 0.01 USD per token is $10,000 per million tokens: a larger value is a price per million written by mistake. */
const MAX_PRICE_NANO_PER_MTOK = 10_000_000_000_000n;
const PROVIDER_FIELDS = new Set([
  "slug",
  "kind",
  "name",
  "base_url",
  "api_key",
  "api_key_env",
  "headers",
  "timeout_ms",
  "idle_timeout_ms",
  "max_tokens_field",
  "connections",
  "data_region",
  "zdr",
  "responses",
]);
const MODEL_FIELDS = new Set([
  "id",
  "name",
  "kind",
  "provider",
  "upstream_model",
  "prompt_price",
  "completion_price",
  "cache_read_price",
  "cache_write_price",
  "context_length",
  "max_completion_tokens",
  "supported_parameters",
]);

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads and validates the file; throws ProvidersFileError listing every problem. */
export function readProvidersFile(path: string, env: Env): ProvidersFileSpec {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ProvidersFileError([
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    ]);
  }
  return parseProvidersFile(text, env, path);
}

export function parseProvidersFile(text: string, env: Env, path = "(inline)"): ProvidersFileSpec {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ProvidersFileError([`not valid JSON: ${(err as Error).message}`]);
  }
  const problems: string[] = [];
  const spec = validate(json, env, path, (field, problem) => problems.push(`${field}: ${problem}`));
  if (problems.length > 0) throw new ProvidersFileError(problems);
  return spec;
}

type Report = (field: string, problem: string) => void;

function validate(json: unknown, env: Env, path: string, report: Report): ProvidersFileSpec {
  const spec: ProvidersFileSpec = { path, providers: [], models: [] };
  if (!isObject(json)) {
    report("(file)", "must be a JSON object with providers and models");
    return spec;
  }
  for (const key of Object.keys(json)) {
    if (key !== "providers" && key !== "models" && key !== "$schema") report(key, "unknown field");
  }
  if (!Array.isArray(json.providers))
    report("providers", json.providers === undefined ? "required" : "must be a list");
  if (!Array.isArray(json.models))
    report("models", json.models === undefined ? "required" : "must be a list");
  const slugs = new Map<string, number>();
  (Array.isArray(json.providers) ? json.providers : []).forEach((raw: unknown, i) => {
    const p = provider(raw, `providers[${i}]`, env, report);
    if (!p) return;
    const seen = slugs.get(p.slug);
    if (seen !== undefined) report(`providers[${i}].slug`, `duplicate "${p.slug}" (also providers[${seen}])`);
    else slugs.set(p.slug, i);
    spec.providers.push(p);
  });
  // Every slug written counts as declared, valid or not: its own problems are reported on it.
  const declared = new Set(
    (Array.isArray(json.providers) ? json.providers : []).map((p: unknown) =>
      isObject(p) ? p.slug : undefined,
    ),
  );
  const providerKinds = new Map(spec.providers.map((p) => [p.slug, p.kind]));
  const served = new Map<string, number>();
  /** Each id's kind and where it was first given: one id is one kind on every provider. */
  const kinds = new Map<string, { kind: ModelKind; at: number }>();
  (Array.isArray(json.models) ? json.models : []).forEach((raw: unknown, i) => {
    const ref = isObject(raw) ? raw.provider : undefined;
    if (typeof ref === "string" && ref !== "" && !declared.has(ref)) {
      report(`models[${i}].provider`, `unknown provider "${ref}" (not in providers)`);
    }
    const m = model(raw, `models[${i}]`, report);
    if (!m) return;
    const first = kinds.get(m.id);
    if (first === undefined) kinds.set(m.id, { kind: m.kind, at: i });
    else if (first.kind !== m.kind) {
      report(
        `models[${i}].kind`,
        `"${m.kind}", but models[${first.at}] serves "${m.id}" as "${first.kind}" (one id is one kind on every provider)`,
      );
      return;
    }
    if (!slugs.has(m.provider)) return;
    if (m.kind === "embedding" && providerKinds.get(m.provider) === "anthropic") {
      report(
        `models[${i}].provider`,
        `"${m.provider}" is kind anthropic, which has no embeddings API (an embedding model needs an openai-compatible provider)`,
      );
      return;
    }
    const key = `${m.id}\u0000${m.provider}`;
    const seen = served.get(key);
    if (seen !== undefined) {
      report(`models[${i}].provider`, `"${m.provider}" already serves "${m.id}" (models[${seen}])`);
      return;
    }
    served.set(key, i);
    spec.models.push(m);
  });
  return spec;
}

function provider(raw: unknown, at: string, env: Env, report: Report): ProviderSpec | null {
  if (!isObject(raw)) {
    report(at, "must be an object");
    return null;
  }
  let ok = true;
  const bad = (field: string, problem: string): void => {
    ok = false;
    report(`${at}.${field}`, problem);
  };
  for (const key of Object.keys(raw)) if (!PROVIDER_FIELDS.has(key)) bad(key, "unknown field");

  const slug = raw.slug;
  if (slug === undefined) bad("slug", "required");
  else if (typeof slug !== "string" || !SLUG.test(slug)) {
    bad(
      "slug",
      "must be 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit",
    );
  } else if (RESERVED_SLUGS.has(slug)) bad("slug", `"${slug}" is the built-in provider's`);

  const kind = raw.kind;
  if (kind === undefined) bad("kind", "required");
  else if (!PROVIDER_KINDS.includes(kind as FileProviderKind))
    bad("kind", `must be one of ${PROVIDER_KINDS.join(", ")}`);

  if (raw.name !== undefined && (typeof raw.name !== "string" || raw.name.trim() === ""))
    bad("name", "must be a non-empty string");

  let baseUrl = "";
  if (raw.base_url === undefined) bad("base_url", "required");
  else if (typeof raw.base_url !== "string" || !isHttpUrl(raw.base_url))
    bad("base_url", "must be an http:// or https:// URL");
  else baseUrl = raw.base_url;

  let apiKey: string | null = null;
  if (raw.api_key !== undefined && raw.api_key_env !== undefined)
    bad("api_key", "give api_key or api_key_env, not both");
  else if (raw.api_key !== undefined) {
    if (typeof raw.api_key !== "string" || raw.api_key.trim() === "")
      bad("api_key", "must be a non-empty string");
    else apiKey = raw.api_key.trim();
  } else if (raw.api_key_env !== undefined) {
    const name = raw.api_key_env;
    if (typeof name !== "string" || !ENV_NAME.test(name))
      bad("api_key_env", "must be an environment variable name");
    else {
      const value = env[name]?.trim();
      if (!value) bad("api_key_env", `environment variable ${name} is not set`);
      else apiKey = value;
    }
  } else if (kind === "anthropic") bad("api_key_env", "required for kind anthropic (or api_key)");

  const headers: Record<string, string> = {};
  if (raw.headers !== undefined) {
    if (!isObject(raw.headers)) bad("headers", "must be an object of header names to string values");
    else {
      for (const [k, v] of Object.entries(raw.headers)) {
        if (!HEADER_NAME.test(k)) bad(`headers.${k}`, "is not a valid header name");
        else if (typeof v !== "string" || /[\r\n]/.test(v))
          bad(`headers.${k}`, "must be a single-line string");
        else headers[k.toLowerCase()] = v;
      }
    }
  }
  const ms = (field: "timeout_ms" | "idle_timeout_ms"): number | null => {
    const v = raw[field];
    if (v === undefined) return null;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 100 || v > 3_600_000) {
      bad(field, "must be an integer number of milliseconds from 100 to 3600000");
      return null;
    }
    return v;
  };
  const timeoutMs = ms("timeout_ms");
  const idleTimeoutMs = ms("idle_timeout_ms");
  let connections: number | null = null;
  if (raw.connections !== undefined) {
    const v = raw.connections;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 4096)
      bad("connections", "must be an integer from 1 to 4096");
    else connections = v;
  }
  let dataRegion: DataRegion = "global";
  if (raw.data_region !== undefined) {
    if (!DATA_REGIONS.includes(raw.data_region as DataRegion))
      bad("data_region", `must be one of ${DATA_REGIONS.join(", ")}`);
    else dataRegion = raw.data_region as DataRegion;
  }
  let zdr = false;
  if (raw.zdr !== undefined) {
    if (typeof raw.zdr !== "boolean") bad("zdr", "must be true or false");
    else zdr = raw.zdr;
  }
  let responses = false;
  if (raw.responses !== undefined) {
    if (typeof raw.responses !== "boolean") bad("responses", "must be true or false");
    else if (kind !== "openai-compatible")
      bad("responses", "applies to kind openai-compatible only (the Responses API is OpenAI's)");
    else responses = raw.responses;
  }
  let maxTokensField: MaxTokensField | null = null;
  if (raw.max_tokens_field !== undefined) {
    if (!MAX_TOKENS_FIELDS.includes(raw.max_tokens_field as MaxTokensField))
      bad("max_tokens_field", `must be one of ${MAX_TOKENS_FIELDS.join(", ")}`);
    else if (kind !== "openai-compatible")
      bad("max_tokens_field", "applies to kind openai-compatible only (Anthropic's is max_tokens)");
    else maxTokensField = raw.max_tokens_field as MaxTokensField;
  }
  if (!ok) return null;
  return {
    slug: slug as string,
    kind: kind as FileProviderKind,
    name: typeof raw.name === "string" ? raw.name.trim() : (slug as string),
    baseUrl,
    apiKey: apiKey === null ? null : new Redacted(apiKey),
    headers: new Redacted(headers),
    timeoutMs,
    idleTimeoutMs,
    maxTokensField,
    connections,
    dataRegion,
    zdr,
    responses,
  };
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === "http:" || u.protocol === "https:") && u.search === "" && u.hash === "";
  } catch {
    return false;
  }
}

function model(raw: unknown, at: string, report: Report): ModelSpec | null {
  if (!isObject(raw)) {
    report(at, "must be an object");
    return null;
  }
  let ok = true;
  const bad = (field: string, problem: string): void => {
    ok = false;
    report(`${at}.${field}`, problem);
  };
  for (const key of Object.keys(raw)) if (!MODEL_FIELDS.has(key)) bad(key, "unknown field");
  const str = (field: string, test: (s: string) => boolean, problem: string): string => {
    const v = raw[field];
    if (v === undefined) bad(field, "required");
    else if (typeof v !== "string" || !test(v)) bad(field, problem);
    else return v;
    return "";
  };
  const id = str(
    "id",
    (s) => s.length <= 200 && MODEL_ID.test(s),
    'must look like "author/model" (letters, digits, . _ : - /)',
  );
  const provider = str("provider", (s) => s !== "", "must be a provider's slug");
  const upstreamModel = str(
    "upstream_model",
    (s) => s.trim() !== "" && s.length <= 200,
    "must be the model name the upstream knows",
  );
  if (raw.name !== undefined && (typeof raw.name !== "string" || raw.name.trim() === ""))
    bad("name", "must be a non-empty string");
  let kind: ModelKind = "chat";
  if (raw.kind !== undefined) {
    if (!MODEL_KINDS.includes(raw.kind as ModelKind))
      bad("kind", `must be one of ${MODEL_KINDS.join(", ")} (default chat)`);
    else kind = raw.kind as ModelKind;
  }
  const embedding = kind === "embedding";
  if (embedding) {
    // A chat model's fields: refused rather than silently ignored.
    for (const [field, why] of [
      ["completion_price", "an embedding model produces no completion tokens"],
      ["cache_read_price", "an embedding model reads no prompt cache"],
      ["cache_write_price", "an embedding model writes no prompt cache"],
      ["max_completion_tokens", "an embedding model produces no completion tokens"],
      ["supported_parameters", "they are chat request parameters"],
    ] as const) {
      if (raw[field] !== undefined) bad(field, `does not apply to kind embedding (${why})`);
    }
  }
  const price = (field: string): bigint => {
    const v = raw[field];
    if (v === undefined || v === null) {
      bad(field, "required (USD per token; a model without prices cannot be configured)");
      return 0n;
    }
    return priceOf(field, v);
  };
  /** USD per token → nano-USD per million tokens, or 0n with the problem reported. */
  const priceOf = (field: string, v: unknown): bigint => {
    if (typeof v !== "number" && typeof v !== "string") {
      bad(field, "must be a number of USD per token");
      return 0n;
    }
    try {
      const nano = usdPerTokenToNanoPerMTok(v);
      if (nano > MAX_PRICE_NANO_PER_MTOK) {
        bad(
          field,
          `is USD per token: ${String(v)} is over 0.01 (a price per million tokens belongs divided by 1e6)`,
        );
      }
      return nano;
    } catch (err) {
      bad(field, `${(err as Error).message} (USD per token)`);
      return 0n;
    }
  };
  const promptPrice = price("prompt_price");
  const completionPrice = embedding ? 0n : price("completion_price");
  // Optional: null is absent, as omitted.
  const optionalPrice = (field: string): bigint | null => {
    const v = raw[field];
    return v === undefined || v === null || embedding ? null : priceOf(field, v);
  };
  const cacheReadPrice = optionalPrice("cache_read_price");
  const cacheWritePrice = optionalPrice("cache_write_price");
  const int = (field: string): number => {
    const v = raw[field];
    if (v === undefined) bad(field, "required");
    else if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 100_000_000)
      bad(field, "must be an integer from 1 to 100000000");
    else return v;
    return 0;
  };
  const contextLength = int("context_length");
  const maxCompletionTokens = embedding ? 0 : int("max_completion_tokens");
  if (contextLength > 0 && maxCompletionTokens > contextLength)
    bad("max_completion_tokens", "must not exceed context_length");
  let supportedParameters: Parameter[] | null = null;
  const listed = raw.supported_parameters;
  if (listed !== undefined && !embedding) {
    if (!Array.isArray(listed) || listed.some((p) => typeof p !== "string"))
      bad("supported_parameters", "must be a list of parameter names");
    else {
      const unknown = listed.filter((p: string) => !isParameter(p));
      if (unknown.length > 0)
        bad(
          "supported_parameters",
          `unknown parameter ${unknown.map((p) => JSON.stringify(p)).join(", ")} (known: ${PARAMETERS.join(", ")})`,
        );
      // max_tokens always applies: the gateway sets the completion cap on every request.
      else supportedParameters = canonical(["max_tokens", ...(listed as string[])]);
    }
  }
  if (!ok) return null;
  return {
    id,
    name: typeof raw.name === "string" ? raw.name.trim() : id,
    kind,
    provider,
    upstreamModel,
    promptPricePerMTokNano: promptPrice,
    completionPricePerMTokNano: completionPrice,
    cacheReadPricePerMTokNano: cacheReadPrice,
    cacheWritePricePerMTokNano: cacheWritePrice,
    contextLength,
    maxCompletionTokens,
    supportedParameters,
  };
}
