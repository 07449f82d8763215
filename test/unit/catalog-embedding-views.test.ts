import { ModelsListResponse$inboundSchema } from "@openrouter/sdk/models";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { DomainError } from "../../src/domain/errors.js";
import { buildCatalog, closeCatalog } from "../../src/gateway/catalog/build-catalog.js";
import {
  EMBEDDING_MODELS_LIMIT,
  filterModels,
  listEmbeddingModels,
  listModels,
  listProviders,
  modelEndpointsView,
} from "../../src/gateway/catalog/catalog-views.js";
import { buildFileProviders } from "../../src/gateway/catalog/load-providers-file.js";
import { requireModelKind } from "../../src/gateway/catalog/model-kind.js";
import { parseProvidersFile } from "../../src/gateway/catalog/providers-file.js";
import { planAttempts } from "../../src/gateway/chat/attempts.js";

/** /models lists chat models unless asked; /embeddings/models lists the embedding models, paged. */

const file = {
  providers: [
    { slug: "alpha", kind: "openai-compatible", base_url: "http://127.0.0.1:9/v1" },
    { slug: "beta", kind: "openai-compatible", base_url: "http://127.0.0.1:9/v1" },
  ],
  models: [
    {
      id: "acme/chat",
      provider: "alpha",
      upstream_model: "chat",
      prompt_price: 0.000001,
      completion_price: 0.000002,
      context_length: 8192,
      max_completion_tokens: 1024,
    },
    ...["acme/embed-a", "acme/embed-b", "acme/embed-c"].map((id, i) => ({
      id,
      kind: "embedding",
      provider: "alpha",
      upstream_model: `embed-${i}`,
      prompt_price: "0.00000002",
      context_length: 8192,
    })),
    {
      id: "acme/embed-a",
      kind: "embedding",
      provider: "beta",
      upstream_model: "embed-a-on-beta",
      prompt_price: "0.00000003",
      context_length: 512,
    },
  ],
};
const catalog = buildCatalog(
  loadConfig({}).gateway,
  buildFileProviders(parseProvidersFile(JSON.stringify(file), {})),
);
afterAll(() => closeCatalog(catalog));

const CHAT = ["acme/chat", "mock/echo", "mock/unavailable"];
const EMBEDDING = ["acme/embed-a", "acme/embed-b", "acme/embed-c", "mock/embed"];
interface ModelView {
  id: string;
  kind?: string;
  architecture: { output_modalities: string[]; modality: string };
  pricing: { prompt: string; completion: string };
  top_provider: { max_completion_tokens: number | null };
  supported_parameters: string[];
  max_completion_tokens?: number | null;
  endpoints: { provider: string; max_completion_tokens: number | null; pricing: { prompt: string } }[];
}
const views = (v: unknown) => v as ModelView[];
const ids = (page: Record<string, unknown>) => (page.data as { id: string }[]).map((m) => m.id);

function refusal(f: () => unknown): DomainError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error("expected a DomainError");
}

describe("/models: chat models unless output_modalities asks for embeddings", () => {
  it("no output_modalities (or an empty list) lists text output only, as the hosted original's default", () => {
    expect(ids(listModels(catalog, 0, 500))).toEqual(CHAT);
    expect(ids(listModels(catalog, 0, 500, { outputModalities: [] }))).toEqual(CHAT);
    expect(listModels(catalog, 0, 500).total_count).toBe(CHAT.length);
    expect(filterModels(catalog).map((m) => m.id)).toEqual(CHAT);
  });

  it("embeddings, all, and a list with both", () => {
    expect(ids(listModels(catalog, 0, 500, { outputModalities: ["embeddings"] }))).toEqual(EMBEDDING);
    expect(ids(listModels(catalog, 0, 500, { outputModalities: ["all"] }))).toEqual(
      [...CHAT, ...EMBEDDING].sort(),
    );
    expect(filterModels(catalog, { outputModalities: ["text", "embeddings"] })).toHaveLength(7);
    expect(filterModels(catalog, { outputModalities: ["image"] })).toEqual([]);
    // Every model takes text, embedding models too.
    expect(
      filterModels(catalog, { outputModalities: ["embeddings"], inputModalities: ["text"] }),
    ).toHaveLength(4);
    expect(filterModels(catalog, { outputModalities: ["all"], inputModalities: ["image"] })).toEqual([]);
  });

  it("an embedding model's view: embeddings out, no completion price or cap, no chat parameter; valid for the SDK", () => {
    const page = listModels(catalog, 0, 1, { outputModalities: ["embeddings"] });
    const [m] = views(page.data);
    expect(m!.id).toBe("acme/embed-a");
    expect(m!.architecture).toEqual({
      input_modalities: ["text"],
      output_modalities: ["embeddings"],
      modality: "text->embeddings",
      tokenizer: "Other",
    });
    expect(m!.pricing).toEqual({ prompt: "0.00000002", completion: "0" });
    expect(m!.top_provider).toEqual({
      is_moderated: false,
      context_length: 8192,
      max_completion_tokens: null,
    });
    expect(m!.supported_parameters).toEqual([]);
    expect(m!.endpoints.map((e) => [e.provider, e.max_completion_tokens, e.pricing.prompt])).toEqual([
      ["alpha", null, "0.00000002"],
      ["beta", null, "0.00000003"],
    ]);
    expect(ModelsListResponse$inboundSchema.parse(page).data[0]!.architecture.outputModalities).toEqual([
      "embeddings",
    ]);
    // A chat model keeps its cap.
    const chat = views(listModels(catalog, 0, 1).data)[0]!;
    expect(chat.top_provider.max_completion_tokens).toBe(1024);
    expect(chat.architecture.output_modalities).toEqual(["text"]);
  });

  it("the endpoints view and /providers say what does not apply to an embedding model", () => {
    const view = modelEndpointsView(catalog, catalog.models.get("acme/embed-a")!) as unknown as ModelView;
    expect(view.architecture.modality).toBe("text->embeddings");
    expect(view.endpoints.map((e) => e.max_completion_tokens)).toEqual([null, null]);
    const providers = (listProviders(catalog).data as { slug: string; models: ModelView[] }[]).find(
      (p) => p.slug === "mock",
    )!;
    expect(providers.models.map((m) => [m.id, m.kind, m.max_completion_tokens])).toEqual([
      ["mock/echo", "chat", 1024],
      ["mock/unavailable", "chat", 1024],
      ["mock/embed", "embedding", null],
    ]);
  });
});

describe("/embeddings/models: the /models shape, embedding models only, paged", () => {
  it("defaults list every embedding model; the SDK's schema takes the body", () => {
    const all = listEmbeddingModels(catalog);
    expect(ids(all)).toEqual(EMBEDDING);
    expect(all.total_count).toBe(4);
    expect(all.links).toEqual({ next: null });
    const parsed = ModelsListResponse$inboundSchema.parse(all);
    expect(parsed.data.map((m) => m.pricing.prompt)).toEqual([
      "0.00000002",
      "0.00000002",
      "0.00000002",
      "0.000001",
    ]);
  });

  it("offset and limit page the list; total_count counts all; past the end is an empty page", () => {
    expect(ids(listEmbeddingModels(catalog, { offset: 1, limit: 2 }))).toEqual([
      "acme/embed-b",
      "acme/embed-c",
    ]);
    expect(listEmbeddingModels(catalog, { offset: 1, limit: 2 }).total_count).toBe(4);
    // The SDK's paging: a full page asks for the next, which must be [] at the end.
    const walked: string[] = [];
    for (let offset = 0; ;) {
      const page = ids(listEmbeddingModels(catalog, { offset, limit: 2 }));
      walked.push(...page);
      if (page.length < 2) break;
      offset += page.length;
    }
    expect(walked).toEqual(EMBEDDING);
    expect(ids(listEmbeddingModels(catalog, { offset: 4, limit: 2 }))).toEqual([]);
    expect(ids(listEmbeddingModels(catalog, { offset: null, limit: EMBEDDING_MODELS_LIMIT }))).toEqual(
      EMBEDDING,
    );
  });

  it("a limit over 500 or below 1, or a negative offset, is a 400 naming the parameter", () => {
    for (const [page, message] of [
      [{ limit: 501 }, "limit: must be an integer from 1 to 500"],
      [{ limit: 0 }, "limit: must be an integer from 1 to 500"],
      [{ limit: 1.5 }, "limit: must be an integer from 1 to 500"],
      [{ offset: -1 }, "offset: must be an integer of at least 0"],
    ] as const) {
      const err = refusal(() => listEmbeddingModels(catalog, page));
      expect(err.status).toBe(400);
      expect(err.message).toBe(message);
    }
  });
});

describe("a request to a model of the other kind is a 400 naming the field", () => {
  it("requireModelKind: the model when it fits, else a refusal saying where it belongs", () => {
    const embed = catalog.models.get("mock/embed")!;
    expect(requireModelKind(embed, "embedding")).toBe(embed);
    const chatToEmbed = refusal(() => requireModelKind(embed, "chat"));
    expect(chatToEmbed.status).toBe(400);
    expect(chatToEmbed.message).toBe(
      "model: mock/embed is an embedding model: use it with POST /api/v1/embeddings, not here (GET /api/v1/models lists the chat models)",
    );
    const embedToChat = refusal(() =>
      requireModelKind(catalog.models.get("mock/echo")!, "embedding", "models"),
    );
    expect(embedToChat.message).toMatch(
      /^models: mock\/echo is a chat model: use it with POST \/api\/v1\/chat\/completions, not here \(GET \/api\/v1\/embeddings\/models lists the embedding models\)$/,
    );
  });

  it("planAttempts refuses a chat request naming an embedding model, in model or in models", () => {
    expect(refusal(() => planAttempts(catalog, "mock/embed", undefined, null)).message).toMatch(
      /^model: mock\/embed is an embedding model/,
    );
    expect(refusal(() => planAttempts(catalog, "mock/echo", ["acme/embed-a"], null)).message).toMatch(
      /^models: acme\/embed-a is an embedding model/,
    );
    expect(planAttempts(catalog, "mock/echo", undefined, null).map((a) => a.model.id)).toEqual(["mock/echo"]);
  });

  it("planAttempts for embeddings: embedding models' endpoints in order; a chat model refused", () => {
    const attempts = planAttempts(catalog, "acme/embed-a", undefined, { order: ["beta"] }, [], "embedding");
    expect(attempts.map((a) => [a.provider.slug, a.endpoint.upstreamModel])).toEqual([
      ["beta", "embed-a-on-beta"],
      ["alpha", "embed-0"],
    ]);
    expect(
      refusal(() => planAttempts(catalog, "acme/chat", undefined, null, [], "embedding")).message,
    ).toMatch(/^model: acme\/chat is a chat model/);
  });
});
