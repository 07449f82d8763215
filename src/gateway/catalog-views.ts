import type { Catalog, ModelEntry } from "./catalog/catalog.js";
import { canonical, supportsAll } from "./catalog/parameters.js";

/** Wire views of the catalog: GET /models (the SDK's Model) and GET /providers. */

const SCALE = 1_000_000_000_000_000n;

/** What every catalog model outputs (the adapters speak chat completions: text). */
const OUTPUT_MODALITIES = ["text"];

/** Catalog models are listed in id order; `created` is the process start (the catalog's build). */
const STARTED = Math.floor(Date.now() / 1000);

/** nano-USD per million tokens → USD per token as an exact decimal string ("0.000001"). */
export function perTokenUsd(nanoPerMTok: bigint): string {
  const whole = nanoPerMTok / SCALE;
  const frac = (nanoPerMTok % SCALE).toString().padStart(15, "0").replace(/0+$/, "");
  return frac === "" ? whole.toString() : `${whole}.${frac}`;
}

/** Every catalog model's architecture (the adapters speak chat completions: text in, text out). */
const ARCHITECTURE = {
  input_modalities: ["text"],
  output_modalities: OUTPUT_MODALITIES,
  modality: "text->text",
  tokenizer: "Other",
};

const descriptionOf = (m: ModelEntry): string =>
  m.isMock
    ? "Built-in mock model (no provider account needed): deterministic answers, for trials and tests."
    : `${m.name}, served by ${m.endpoints.map((x) => x.provider).join(", ")}.`;

/** A catalog model as the SDK's Model (dataplane-facts.md §6.2); prices of its first endpoint. */
export function modelView(m: ModelEntry, created: number): Record<string, unknown> {
  const e = m.endpoints[0];
  const maxContext = Math.max(...m.endpoints.map((x) => x.contextLength));
  return {
    id: m.id,
    canonical_slug: m.id,
    name: m.name,
    created,
    description: descriptionOf(m),
    context_length: maxContext,
    architecture: ARCHITECTURE,
    pricing: {
      prompt: e ? perTokenUsd(e.promptPricePerMTokNano) : "0",
      completion: e ? perTokenUsd(e.completionPricePerMTokNano) : "0",
    },
    top_provider: {
      is_moderated: false,
      context_length: e?.contextLength ?? null,
      max_completion_tokens: e?.maxCompletionTokens ?? null,
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
      pricing: {
        prompt: perTokenUsd(x.promptPricePerMTokNano),
        completion: perTokenUsd(x.completionPricePerMTokNano),
      },
      context_length: x.contextLength,
      max_completion_tokens: x.maxCompletionTokens,
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
    architecture: { ...ARCHITECTURE, instruct_type: null },
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
        max_completion_tokens: e.maxCompletionTokens,
        max_prompt_tokens: null,
        pricing: {
          prompt: perTokenUsd(e.promptPricePerMTokNano),
          completion: perTokenUsd(e.completionPricePerMTokNano),
        },
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
  /** Only models that output one of these (`all`, or none given: any). */
  outputModalities?: readonly string[];
}

/** The catalog's models that pass `filter`, in id order. */
export function filterModels(catalog: Catalog, filter: ModelFilter = {}): ModelEntry[] {
  const wanted = filter.supportedParameters ?? [];
  const outputs = filter.outputModalities ?? [];
  // Every model outputs OUTPUT_MODALITIES: the filter keeps all of them or none.
  const outputOk =
    outputs.length === 0 || outputs.includes("all") || OUTPUT_MODALITIES.some((o) => outputs.includes(o));
  if (!outputOk) return [];
  return [...catalog.models.values()]
    .filter((m) => m.endpoints.some((e) => supportsAll(e.supportedParameters, wanted)))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

export function listModels(
  catalog: Catalog,
  offset: number,
  limit: number,
  filter: ModelFilter = {},
): Record<string, unknown> {
  const all = filterModels(catalog, filter);
  return {
    data: all.slice(offset, offset + limit).map((m) => modelView(m, STARTED)),
    links: { next: null },
    total_count: all.length,
  };
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
            upstream_model: e.upstreamModel,
            is_mock: m.isMock,
            pricing: {
              prompt: perTokenUsd(e.promptPricePerMTokNano),
              completion: perTokenUsd(e.completionPricePerMTokNano),
            },
            context_length: e.contextLength,
            max_completion_tokens: e.maxCompletionTokens,
          })),
      ),
    })),
  };
}
