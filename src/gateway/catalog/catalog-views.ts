import { invalid } from "../../domain/errors.js";
import type { Catalog, ModelEndpoint, ModelEntry } from "./catalog.js";
import type { ModelKind } from "./model-kind.js";
import { canonical, supportsAll } from "./parameters.js";

/**
 * Wire views of the catalog: GET /models (the SDK's Model), GET /embeddings/models (the same
 * shape, embedding models only) and GET /providers.
 */

const SCALE = 1_000_000_000_000_000n;

/** Catalog models are listed in id order; `created` is the process start (the catalog's build). */
const STARTED = Math.floor(Date.now() / 1000);

/** nano-USD per million tokens → USD per token as an exact decimal string ("0.000001"). */
export function perTokenUsd(nanoPerMTok: bigint): string {
  const whole = nanoPerMTok / SCALE;
  const frac = (nanoPerMTok % SCALE).toString().padStart(15, "0").replace(/0+$/, "");
  return frac === "" ? whole.toString() : `${whole}.${frac}`;
}

/**
 * An endpoint's prices as the SDK's PublicPricing (docs/wire-compatibility.md "Model list"): USD
 * per token as decimal strings; `input_cache_read` and `input_cache_write` only when the
 * providers file gives them (without them, cache tokens cost the prompt price).
 */
export function pricingView(e: ModelEndpoint): Record<string, string> {
  return {
    prompt: perTokenUsd(e.promptPricePerMTokNano),
    completion: perTokenUsd(e.completionPricePerMTokNano),
    ...(e.cacheReadPricePerMTokNano !== null
      ? { input_cache_read: perTokenUsd(e.cacheReadPricePerMTokNano) }
      : {}),
    ...(e.cacheWritePricePerMTokNano !== null
      ? { input_cache_write: perTokenUsd(e.cacheWritePricePerMTokNano) }
      : {}),
  };
}

/**
 * Each kind's architecture: the adapters take text; a chat model outputs text, an embedding model
 * vectors (the hosted original's output modality `embeddings`).
 */
const ARCHITECTURE: Record<
  ModelKind,
  { input_modalities: string[]; output_modalities: string[]; modality: string; tokenizer: string }
> = {
  chat: {
    input_modalities: ["text"],
    output_modalities: ["text"],
    modality: "text->text",
    tokenizer: "Other",
  },
  embedding: {
    input_modalities: ["text"],
    output_modalities: ["embeddings"],
    modality: "text->embeddings",
    tokenizer: "Other",
  },
};

/**
 * The output modalities /models lists when the query names none: the hosted original's default
 * (its `output_modalities` "defaults to text"), so chat clients never see embedding models
 * unless they ask (`output_modalities=embeddings`, or `all`).
 */
export const DEFAULT_OUTPUT_MODALITIES: readonly string[] = ["text"];

/** A completion limit that does not apply (an embedding model) is null on the wire. */
const completionCap = (kind: ModelKind, tokens: number): number | null =>
  kind === "embedding" ? null : tokens;

/** A model's `context_length` as /models shows it: the largest of its endpoints'. */
const contextOf = (m: ModelEntry): number => Math.max(...m.endpoints.map((x) => x.contextLength));

const descriptionOf = (m: ModelEntry): string =>
  m.isMock
    ? `Built-in mock model (no provider account needed): deterministic ${m.kind === "embedding" ? "vectors" : "answers"}, for trials and tests.`
    : `${m.name}, served by ${m.endpoints.map((x) => x.provider).join(", ")}.`;

/** A catalog model as the SDK's Model (docs/wire-compatibility.md "Model list"); first endpoint's prices. */
export function modelView(m: ModelEntry, created: number): Record<string, unknown> {
  const e = m.endpoints[0];
  return {
    id: m.id,
    canonical_slug: m.id,
    name: m.name,
    created,
    description: descriptionOf(m),
    context_length: contextOf(m),
    architecture: ARCHITECTURE[m.kind],
    pricing: e ? pricingView(e) : { prompt: "0", completion: "0" },
    top_provider: {
      is_moderated: false,
      context_length: e?.contextLength ?? null,
      max_completion_tokens: e ? completionCap(m.kind, e.maxCompletionTokens) : null,
    },
    per_request_limits: null,
    // What at least one endpoint honours (`provider.require_parameters` routes to those that do).
    supported_parameters: supportedParameters(m),
    supported_voices: null,
    default_parameters: null,
    links: { details: `/api/v1/models/${m.id}/endpoints` },
    is_mock: m.isMock,
    endpoints: m.endpoints.map((x) => ({
      provider: x.provider,
      upstream_model: x.upstreamModel,
      pricing: pricingView(x),
      context_length: x.contextLength,
      max_completion_tokens: completionCap(m.kind, x.maxCompletionTokens),
      supported_parameters: [...x.supportedParameters],
    })),
  };
}

/**
 * GET /models/{author}/{slug}/endpoints (the SDK's `endpoints.list`, and every model's
 * `links.details`): the model and each provider serving it, with its prices, limits and the
 * parameters it honours. No traffic statistics are kept per endpoint: those fields are null.
 */
export function modelEndpointsView(catalog: Catalog, m: ModelEntry): Record<string, unknown> {
  return {
    id: m.id,
    name: m.name,
    created: STARTED,
    description: descriptionOf(m),
    architecture: { ...ARCHITECTURE[m.kind], instruct_type: null },
    endpoints: m.endpoints.map((e) => {
      const provider = catalog.providers.get(e.provider);
      const name = provider?.name ?? e.provider;
      const toolChoice = e.supportedParameters.includes("tool_choice");
      return {
        name: `${name} | ${m.id}`,
        model_id: m.id,
        model_name: m.name,
        provider_name: name,
        tag: e.provider,
        context_length: e.contextLength,
        max_completion_tokens: completionCap(m.kind, e.maxCompletionTokens),
        max_prompt_tokens: null,
        pricing: pricingView(e),
        quantization: null,
        supported_parameters: [...e.supportedParameters],
        supports_implicit_caching: false,
        supports_tool_choice: {
          auto: toolChoice,
          function: toolChoice,
          none: toolChoice,
          required: toolChoice,
        },
        latency_last_30m: null,
        throughput_last_30m: null,
        uptime_last_5m: null,
        uptime_last_30m: null,
        uptime_last_1d: null,
      };
    }),
  };
}

/** GET /model/{author}/{slug} (the SDK's `models.get`): one model as /models lists it. */
export const oneModelView = (m: ModelEntry): Record<string, unknown> => modelView(m, STARTED);

/** The union of a model's endpoints' parameters, in canonical order. */
export function supportedParameters(m: ModelEntry): string[] {
  return canonical(m.endpoints.flatMap((e) => e.supportedParameters));
}

export interface ModelFilter {
  /** Only models with one endpoint that honours every one of these (the query's comma list). */
  supportedParameters?: readonly string[];
  /**
   * Only models that output one of these (`all`: any; none given: DEFAULT_OUTPUT_MODALITIES, so
   * text: chat models only, as the hosted original's default).
   */
  outputModalities?: readonly string[];
  /** Only models that take one of these as input (`all`, or none given: any). */
  inputModalities?: readonly string[];
  /** Case-insensitive text that the id, name or description contains (empty: any). */
  text?: string;
  /** Only models served by one of these providers: slug or display name, any case. */
  providers?: readonly string[];
  /** Only models whose author (the id before its first slash) is one of these, any case. */
  authors?: readonly string[];
  /** Only models whose `context_length` is at least this. */
  minContext?: number;
  /**
   * Bounds (inclusive) of the prices /models shows (the first endpoint's), in USD per million
   * tokens like the hosted original's `min_price`, `max_price`, `min_output_price` and
   * `max_output_price`: `prompt` bounds the prompt price, `completion` the completion price.
   */
  prompt?: PriceBounds;
  completion?: PriceBounds;
}

export interface PriceBounds {
  min?: number;
  max?: number;
}

/** nano-USD per million tokens → USD per million tokens (exact below 2^53 nano-USD: every price). */
const perMillionUsd = (nanoPerMTok: bigint): number => Number(nanoPerMTok) / 1e9;

const within = (price: bigint | undefined, bounds: PriceBounds | undefined): boolean => {
  if (bounds === undefined || (bounds.min === undefined && bounds.max === undefined)) return true;
  const usd = perMillionUsd(price ?? 0n);
  return (bounds.min === undefined || usd >= bounds.min) && (bounds.max === undefined || usd <= bounds.max);
};

/** A comma list of the query against what a model has: none given, `all`, or one in common. */
const anyOf = (wanted: readonly string[] | undefined, has: readonly string[]): boolean =>
  wanted === undefined ||
  wanted.length === 0 ||
  wanted.includes("all") ||
  has.some((x) => wanted.includes(x));

/** The catalog's models that pass `filter`, in id order. */
export function filterModels(catalog: Catalog, filter: ModelFilter = {}): ModelEntry[] {
  const wanted = filter.supportedParameters ?? [];
  const outputs =
    filter.outputModalities === undefined || filter.outputModalities.length === 0
      ? DEFAULT_OUTPUT_MODALITIES
      : filter.outputModalities;
  const text = (filter.text ?? "").toLowerCase();
  const providers = new Set((filter.providers ?? []).map((p) => p.toLowerCase()));
  const authors = new Set((filter.authors ?? []).map((a) => a.toLowerCase()));
  const servedByOneOf = (m: ModelEntry): boolean =>
    m.endpoints.some((e) => {
      const name = catalog.providers.get(e.provider)?.name ?? e.provider;
      return providers.has(e.provider.toLowerCase()) || providers.has(name.toLowerCase());
    });
  return [...catalog.models.values()]
    .filter(
      (m) =>
        anyOf(outputs, ARCHITECTURE[m.kind].output_modalities) &&
        anyOf(filter.inputModalities, ARCHITECTURE[m.kind].input_modalities) &&
        m.endpoints.some((e) => supportsAll(e.supportedParameters, wanted)) &&
        (text === "" || [m.id, m.name, descriptionOf(m)].some((s) => s.toLowerCase().includes(text))) &&
        (providers.size === 0 || servedByOneOf(m)) &&
        (authors.size === 0 || authors.has(m.id.split("/")[0]!.toLowerCase())) &&
        (filter.minContext === undefined || contextOf(m) >= filter.minContext) &&
        within(m.endpoints[0]?.promptPricePerMTokNano, filter.prompt) &&
        within(m.endpoints[0]?.completionPricePerMTokNano, filter.completion),
    )
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

/**
 * `models` (in id order) in the order `sort` names, ties in id order. The pricing orders compare
 * the sum of the prompt and completion prices /models shows (the hosted original: their average);
 * `newest` compares `created`, which is the same for every model here (the catalog's build), so it
 * keeps the id order. Any other value (the hosted original's popularity, throughput, latency and
 * benchmark orders: no such data is kept) keeps the id order too.
 */
export function sortModels(models: ModelEntry[], sort: string | undefined): ModelEntry[] {
  const price = (m: ModelEntry): bigint => {
    const e = m.endpoints[0];
    return e ? e.promptPricePerMTokNano + e.completionPricePerMTokNano : 0n;
  };
  const cmp = (x: bigint | number, y: bigint | number): number => (x < y ? -1 : x > y ? 1 : 0);
  switch (sort) {
    case "pricing-low-to-high":
      return [...models].sort((a, b) => cmp(price(a), price(b)));
    case "pricing-high-to-low":
      return [...models].sort((a, b) => cmp(price(b), price(a)));
    case "context-high-to-low":
      return [...models].sort((a, b) => cmp(contextOf(b), contextOf(a)));
    default:
      // `newest`: every model's `created` is STARTED, a tie throughout.
      return models;
  }
}

export function listModels(
  catalog: Catalog,
  offset: number,
  limit: number,
  filter: ModelFilter = {},
  sort?: string,
): Record<string, unknown> {
  const all = sortModels(filterModels(catalog, filter), sort);
  return {
    data: all.slice(offset, offset + limit).map((m) => modelView(m, STARTED)),
    links: { next: null },
    total_count: all.length,
  };
}

/** GET /embeddings/models' page size: its default and its largest (the SDK sends `limit=500`). */
export const EMBEDDING_MODELS_LIMIT = 500;

/**
 * GET /embeddings/models (the SDK's `embeddings.listModels`): the embedding models in the /models
 * shape, in id order, paged as /models is (docs/wire-compatibility.md "Model list"): `offset`
 * (default 0) and `limit` (default and at most EMBEDDING_MODELS_LIMIT; the SDK maps this route's
 * 400, so a limit past it is refused rather than cut, which would end the SDK's paging early).
 * A page past the end is `data: []`. `total_count` counts every embedding model.
 */
export function listEmbeddingModels(
  catalog: Catalog,
  page: { offset?: number | null; limit?: number | null } = {},
): Record<string, unknown> {
  const offset = page.offset ?? 0;
  const limit = page.limit ?? EMBEDDING_MODELS_LIMIT;
  if (!Number.isSafeInteger(offset) || offset < 0) throw invalid("offset: must be an integer of at least 0");
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > EMBEDDING_MODELS_LIMIT)
    throw invalid(`limit: must be an integer from 1 to ${EMBEDDING_MODELS_LIMIT}`);
  return listModels(catalog, offset, limit, { outputModalities: ["embeddings"] });
}

export function listProviders(catalog: Catalog): Record<string, unknown> {
  const models = [...catalog.models.values()];
  return {
    data: [...catalog.providers.values()].map((p) => ({
      name: p.name,
      slug: p.slug,
      kind: p.kind,
      privacy_policy_url: null,
      terms_of_service_url: null,
      status_page_url: null,
      models: models.flatMap((m) =>
        m.endpoints
          .filter((e) => e.provider === p.slug)
          .map((e) => ({
            id: m.id,
            kind: m.kind,
            upstream_model: e.upstreamModel,
            is_mock: m.isMock,
            pricing: {
              prompt: perTokenUsd(e.promptPricePerMTokNano),
              completion: perTokenUsd(e.completionPricePerMTokNano),
            },
            context_length: e.contextLength,
            max_completion_tokens: completionCap(m.kind, e.maxCompletionTokens),
          })),
      ),
    })),
  };
}
