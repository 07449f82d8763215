import type { DataRegion } from "../../domain/guardrails/guardrail-policy.js";
import type { NativeKind, ProviderAdapter } from "../providers/provider.js";
import type { ModelKind } from "./model-kind.js";
import type { Parameter } from "./parameters.js";

/**
 * What this installation can route to: providers (an adapter plus its identity) and models (one
 * or more endpoints, each a provider serving it at a price). Built once at start from the built-in
 * mock provider and the providers file (GATEHOUSE_PROVIDERS_FILE); frozen afterwards.
 */
export type ProviderKind = "openai-compatible" | "anthropic" | "mock";

export interface ProviderEntry {
  slug: string;
  kind: ProviderKind;
  /** Display name for /providers. */
  name: string;
  adapter: ProviderAdapter;
  /**
   * First-byte deadline of every call to this provider (the providers file's `timeout_ms`);
   * absent or null: the gateway's GATEHOUSE_UPSTREAM_TIMEOUT_MS.
   */
  timeoutMs?: number | null;
  /**
   * The size of its connection pool (the providers file's `connections`); absent: the default
   * (128); null: no pool (the built-in mock). One workspace's requests in flight here are capped
   * at GATEHOUSE_WORKSPACE_PROVIDER_SHARE percent of it (in-flight-limits.ts).
   */
  connections?: number | null;
  /** Where it processes requests (the providers file's `data_region`); absent: global. */
  dataRegion?: DataRegion;
  /** It keeps no prompts or completions (the providers file's `zdr`); absent: false. */
  zdr?: boolean;
  /**
   * An `openai-compatible` provider that also serves OpenAI's Responses API at {base}/responses
   * (the providers file's `responses`); absent: false. Responses requests go to it as sent.
   */
  responses?: boolean;
}

/**
 * Whether a request in a provider's own API (UpstreamCall.native) goes to this provider as sent:
 * a Messages request to an `anthropic` provider, a Responses request to an `openai-compatible`
 * one that declares `responses: true`. Every other provider gets the chat translation.
 */
export function speaksNative(p: ProviderEntry, kind: NativeKind): boolean {
  if (kind === "anthropic") return p.kind === "anthropic";
  return p.kind === "openai-compatible" && p.responses === true;
}

/**
 * Prices are exact: nano-USD per million tokens (USD per token × 1e15), so a price of
 * 0.000001 USD per token is 1_000_000_000n. A model without prices cannot be configured.
 *
 * An embedding model's endpoint produces no completion tokens: its completion price and its
 * `maxCompletionTokens` are 0, which is also what its reservation's worst case must count for
 * them; its `contextLength` bounds each input, and `supportedParameters` is empty (the
 * vocabulary is chat's).
 */
export interface ModelEndpoint {
  provider: string;
  upstreamModel: string;
  promptPricePerMTokNano: bigint;
  completionPricePerMTokNano: bigint;
  /**
   * The prices of cached prompt tokens read and of prompt tokens written to the provider's cache;
   * null: none given, those tokens cost the prompt price (docs/gateway.md "What a request costs").
   */
  cacheReadPricePerMTokNano: bigint | null;
  cacheWritePricePerMTokNano: bigint | null;
  contextLength: number;
  maxCompletionTokens: number;
  /** Request parameters this endpoint honours, in canonical order (parameters.ts). */
  supportedParameters: readonly Parameter[];
}

export interface ModelEntry {
  /** `provider/model` permaslug, as clients name it. */
  id: string;
  name: string;
  /** What it answers: chat completions, or embeddings (model-kind.ts); every endpoint alike. */
  kind: ModelKind;
  /** True for the built-in mock: /models says so. */
  isMock: boolean;
  /** In preference order; the first is the default route. */
  endpoints: ModelEndpoint[];
}

export interface Catalog {
  providers: ReadonlyMap<string, ProviderEntry>;
  models: ReadonlyMap<string, ModelEntry>;
}
