import type { GatewayConfig } from "../../config/config.js";
import { MockAdapter } from "../providers/mock.js";
import type { Catalog, ModelEntry, ProviderEntry } from "./catalog.js";
import type { ModelKind } from "./model-kind.js";
import { DEFAULT_PARAMETERS } from "./parameters.js";

/**
 * Prices of the mock: 0.000001 USD per prompt token, 0.000002 per completion token; `mock/embed`
 * (an embedding model: no completion) the same prompt price.
 */
const MOCK_PROMPT_PRICE_NANO_PER_MTOK = 1_000_000_000n;
const MOCK_COMPLETION_PRICE_NANO_PER_MTOK = 2_000_000_000n;

function mockEntries(latencyMs: number): { provider: ProviderEntry; models: ModelEntry[] } {
  const provider: ProviderEntry = {
    slug: "mock",
    kind: "mock",
    name: "Mock",
    // Answered in process: no connections to share, and nothing kept anywhere.
    connections: null,
    zdr: true,
    adapter: new MockAdapter({ latencyMs }),
  };
  const model = (id: string, name: string, upstreamModel: string, kind: ModelKind = "chat"): ModelEntry => ({
    id,
    name,
    kind,
    isMock: true,
    endpoints: [
      {
        provider: "mock",
        upstreamModel,
        promptPricePerMTokNano: MOCK_PROMPT_PRICE_NANO_PER_MTOK,
        cacheReadPricePerMTokNano: null,
        cacheWritePricePerMTokNano: null,
        ...(kind === "chat"
          ? {
              completionPricePerMTokNano: MOCK_COMPLETION_PRICE_NANO_PER_MTOK,
              maxCompletionTokens: 1024,
              supportedParameters: DEFAULT_PARAMETERS.mock,
            }
          : { completionPricePerMTokNano: 0n, maxCompletionTokens: 0, supportedParameters: [] }),
        contextLength: 8192,
      },
    ],
  });
  return {
    provider,
    models: [
      model("mock/echo", "Mock: Echo", "echo"),
      model("mock/unavailable", "Mock: Always unavailable (503)", "unavailable"),
      model("mock/embed", "Mock: Embeddings", "embed", "embedding"),
    ],
  };
}

/**
 * The catalog this installation routes to: the built-in mock (unless disabled) plus `extra`
 * entries (the providers file's, merged by its loader). A model id or provider slug given twice is
 * a configuration error.
 */
export function buildCatalog(
  config: GatewayConfig,
  extra: { providers: readonly ProviderEntry[]; models: readonly ModelEntry[] } = {
    providers: [],
    models: [],
  },
): Catalog {
  const providers = new Map<string, ProviderEntry>();
  const models = new Map<string, ModelEntry>();
  const parts = config.mockEnabled ? [mockEntries(config.mockLatencyMs), extra] : [extra];
  for (const part of parts) {
    for (const p of "provider" in part ? [part.provider] : part.providers) {
      if (providers.has(p.slug)) throw new Error(`provider ${p.slug}: configured twice`);
      providers.set(p.slug, p);
    }
    for (const m of part.models) {
      if (models.has(m.id)) throw new Error(`model ${m.id}: configured twice`);
      for (const e of m.endpoints) {
        if (!providers.has(e.provider)) throw new Error(`model ${m.id}: unknown provider ${e.provider}`);
      }
      models.set(m.id, m);
    }
  }
  return { providers, models };
}

/**
 * Closes every provider's connection pool (the providers file's adapters each own one): at
 * shutdown, so upstreams see their kept-alive connections end at once.
 */
export async function closeCatalog(catalog: Catalog): Promise<void> {
  await Promise.all(
    [...catalog.providers.values()].map(async (p) => {
      await p.adapter.close?.().catch(() => undefined);
    }),
  );
}
