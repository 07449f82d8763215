import type { Catalog, ModelEntry } from "./catalog/catalog.js";
import { canonical, supportsAll } from "./catalog/parameters.js";

/** Wire views of the catalog: GET /models (the SDK's Model) and GET /providers. */

const SCALE = 1_000_000_000_000_000n;

/** nano-USD per million tokens → USD per token as an exact decimal string ("0.000001"). */
export function perTokenUsd(nanoPerMTok: bigint): string {
  const whole = nanoPerMTok / SCALE;
  const frac = (nanoPerMTok % SCALE).toString().padStart(15, "0").replace(/0+$/, "");
  return frac === "" ? whole.toString() : `${whole}.${frac}`;
}

/** A catalog model as the SDK's Model (dataplane-facts.md §6.2); prices of its first endpoint. */
export function modelView(m: ModelEntry, created: number): Record<string, unknown> {
  const e = m.endpoints[0];
  const maxContext = Math.max(...m.endpoints.map((x) => x.contextLength));
  return {
    id: m.id,
    canonical_slug: m.id,
    name: m.name,
    created,
    description: m.isMock
      ? "Built-in mock model (no provider account needed): deterministic answers, for trials and tests."
      : `${m.name}, served by ${m.endpoints.map((x) => x.provider).join(", ")}.`,
    context_length: maxContext,
    architecture: {
      input_modalities: ["text"],
      output_modalities: ["text"],
      modality: "text->text",
      tokenizer: "Other",
    },
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

/** The union of a model's endpoints' parameters, in canonical order. */
export function supportedParameters(m: ModelEntry): string[] {
  return canonical(m.endpoints.flatMap((e) => e.supportedParameters));
}

/** Catalog models are listed in id order; `created` is the process start (the catalog's build). */
const STARTED = Math.floor(Date.now() / 1000);

export interface ModelFilter {
  /** Only models with one endpoint that honours every one of these (the query's comma list). */
  supportedParameters?: readonly string[];
}

export function listModels(
  catalog: Catalog,
  offset: number,
  limit: number,
  filter: ModelFilter = {},
): Record<string, unknown> {
  const wanted = filter.supportedParameters ?? [];
  const all = [...catalog.models.values()]
    .filter((m) => m.endpoints.some((e) => supportsAll(e.supportedParameters, wanted)))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
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
