import { createAnthropicAdapter } from "../providers/anthropic/anthropic.js";
import {
  createOpenAICompatibleAdapter,
  type UpstreamEndpointOptions,
} from "../providers/openai/openai-compatible.js";
import type { ProviderAdapter } from "../providers/provider.js";
import type { ModelEntry, ProviderEntry } from "./catalog.js";
import { DEFAULT_PARAMETERS } from "./parameters.js";
import { readProvidersFile, type FileProviderKind, type ProvidersFileSpec } from "./providers-file.js";

/** One adapter factory per wire format: a new kind is a line here plus its module. */
const ADAPTERS: Record<FileProviderKind, (opts: UpstreamEndpointOptions) => ProviderAdapter> = {
  "openai-compatible": createOpenAICompatibleAdapter,
  anthropic: createAnthropicAdapter,
};

export interface FileCatalogPart {
  providers: ProviderEntry[];
  /** A model served by several providers has one entry, its endpoints in file order. */
  models: ModelEntry[];
}

/**
 * The providers file's part of the catalog, adapters built (each with its own connection pool:
 * close them with the adapter's close() at shutdown). The gateway's buildCatalog merges it with
 * the built-in mock.
 */
export function buildFileProviders(spec: ProvidersFileSpec): FileCatalogPart {
  const providers = spec.providers.map((p): ProviderEntry => ({
    slug: p.slug,
    kind: p.kind,
    name: p.name,
    timeoutMs: p.timeoutMs,
    dataRegion: p.dataRegion,
    zdr: p.zdr,
    ...(p.responses ? { responses: true } : {}),
    ...(p.connections !== null ? { connections: p.connections } : {}),
    adapter: ADAPTERS[p.kind]({
      baseUrl: p.baseUrl,
      apiKey: p.apiKey?.reveal() ?? null,
      headers: p.headers.reveal(),
      ...(p.idleTimeoutMs !== null ? { idleTimeoutMs: p.idleTimeoutMs } : {}),
      ...(p.maxTokensField !== null ? { maxTokensField: p.maxTokensField } : {}),
      ...(p.connections !== null ? { connections: p.connections } : {}),
    }),
  }));
  const kinds = new Map(spec.providers.map((p) => [p.slug, p.kind]));
  const models = new Map<string, ModelEntry>();
  for (const m of spec.models) {
    let entry = models.get(m.id);
    if (!entry) {
      entry = { id: m.id, name: m.name, kind: m.kind, isMock: false, endpoints: [] };
      models.set(m.id, entry);
    }
    const kind = kinds.get(m.provider);
    if (kind === undefined) throw new Error(`model ${m.id}: unknown provider ${m.provider}`);
    entry.endpoints.push({
      provider: m.provider,
      upstreamModel: m.upstreamModel,
      promptPricePerMTokNano: m.promptPricePerMTokNano,
      completionPricePerMTokNano: m.completionPricePerMTokNano,
      cacheReadPricePerMTokNano: m.cacheReadPricePerMTokNano,
      cacheWritePricePerMTokNano: m.cacheWritePricePerMTokNano,
      contextLength: m.contextLength,
      maxCompletionTokens: m.maxCompletionTokens,
      // Chat's vocabulary: an embedding model honours none of it.
      supportedParameters: m.kind === "embedding" ? [] : (m.supportedParameters ?? DEFAULT_PARAMETERS[kind]),
    });
  }
  return { providers, models: [...models.values()] };
}

/** Reads, validates (throws ProvidersFileError listing every problem) and builds the adapters. */
export function loadProvidersFile(path: string, env: Record<string, string | undefined>): FileCatalogPart {
  return buildFileProviders(readProvidersFile(path, env));
}
