import { describe, expect, it } from "vitest";
import { buildFileProviders } from "../../src/gateway/catalog/load-providers-file.js";
import { ProvidersFileError, parseProvidersFile } from "../../src/gateway/catalog/providers-file.js";

/** The providers file's `kind` of a model: chat (default) or embedding, each with its own fields. */

const PROVIDER = { slug: "local", kind: "openai-compatible", base_url: "http://127.0.0.1:9000/v1" };
const CHAT = {
  id: "local/tiny",
  provider: "local",
  upstream_model: "tiny",
  prompt_price: 0.000001,
  completion_price: 0.000002,
  context_length: 8192,
  max_completion_tokens: 1024,
};
const EMBED = {
  id: "local/embed",
  kind: "embedding",
  provider: "local",
  upstream_model: "nomic-embed-text",
  prompt_price: "0.00000002",
  context_length: 8192,
};

const fileOf = (...models: unknown[]) => JSON.stringify({ providers: [PROVIDER], models });

function problemsOf(text: string): string[] {
  try {
    parseProvidersFile(text, {});
  } catch (err) {
    expect(err).toBeInstanceOf(ProvidersFileError);
    return (err as ProvidersFileError).problems;
  }
  throw new Error("expected a ProvidersFileError");
}

describe("providers file: model kind", () => {
  it("a model is chat by default; an embedding model needs no completion price nor completion cap", () => {
    const spec = parseProvidersFile(fileOf(CHAT, EMBED), {});
    expect(spec.models.map((m) => [m.id, m.kind])).toEqual([
      ["local/tiny", "chat"],
      ["local/embed", "embedding"],
    ]);
    expect(spec.models[1]).toEqual({
      id: "local/embed",
      name: "local/embed",
      kind: "embedding",
      provider: "local",
      upstreamModel: "nomic-embed-text",
      promptPricePerMTokNano: 20_000_000n,
      completionPricePerMTokNano: 0n,
      cacheReadPricePerMTokNano: null,
      cacheWritePricePerMTokNano: null,
      contextLength: 8192,
      maxCompletionTokens: 0,
      supportedParameters: null,
    });
    // An explicit chat is the default written out.
    expect(parseProvidersFile(fileOf({ ...CHAT, kind: "chat" }), {}).models[0]!.kind).toBe("chat");
  });

  it("the catalog entry carries the kind; an embedding endpoint honours no chat parameter", async () => {
    const part = buildFileProviders(parseProvidersFile(fileOf(CHAT, EMBED), {}));
    const embed = part.models.find((m) => m.id === "local/embed")!;
    expect(embed.kind).toBe("embedding");
    expect(embed.endpoints[0]).toMatchObject({
      completionPricePerMTokNano: 0n,
      maxCompletionTokens: 0,
      supportedParameters: [],
    });
    const chat = part.models.find((m) => m.id === "local/tiny")!;
    expect(chat.kind).toBe("chat");
    expect(chat.endpoints[0]!.supportedParameters).toContain("temperature");
    await Promise.all(part.providers.map((p) => p.adapter.close?.() ?? Promise.resolve()));
  });

  it("an embedding model still needs its prompt price and context length, each named", () => {
    const { prompt_price: _p, context_length: _c, ...bare } = EMBED;
    expect(problemsOf(fileOf(bare))).toEqual([
      "models[0].prompt_price: required (USD per token; a model without prices cannot be configured)",
      "models[0].context_length: required",
    ]);
  });

  it("a chat model's fields are refused on an embedding model, each named", () => {
    const problems = problemsOf(
      fileOf({
        ...EMBED,
        completion_price: 0.000001,
        max_completion_tokens: 512,
        supported_parameters: ["temperature"],
      }),
    );
    expect(problems).toEqual([
      "models[0].completion_price: does not apply to kind embedding (an embedding model produces no completion tokens)",
      "models[0].max_completion_tokens: does not apply to kind embedding (an embedding model produces no completion tokens)",
      "models[0].supported_parameters: does not apply to kind embedding (they are chat request parameters)",
    ]);
  });

  it("a chat model (kind absent or chat) still requires its completion price and cap, each named", () => {
    const { completion_price: _p, max_completion_tokens: _m, ...noCompletion } = CHAT;
    for (const m of [noCompletion, { ...noCompletion, kind: "chat" }]) {
      expect(problemsOf(fileOf(m))).toEqual([
        "models[0].completion_price: required (USD per token; a model without prices cannot be configured)",
        "models[0].max_completion_tokens: required",
      ]);
    }
  });

  it("an embedding model on an anthropic provider is refused at start, naming the provider", () => {
    const text = JSON.stringify({
      providers: [
        PROVIDER,
        { slug: "claude", kind: "anthropic", base_url: "https://api.anthropic.com", api_key: "k" },
      ],
      models: [EMBED, { ...EMBED, provider: "claude" }, { ...CHAT, provider: "claude" }],
    });
    expect(problemsOf(text)).toEqual([
      'models[1].provider: "claude" is kind anthropic, which has no embeddings API (an embedding model needs an openai-compatible provider)',
    ]);
  });

  it("an unknown kind is named with the kinds there are", () => {
    expect(problemsOf(fileOf({ ...CHAT, kind: "rerank" }))).toEqual([
      "models[0].kind: must be one of chat, embedding (default chat)",
    ]);
    expect(problemsOf(fileOf({ ...CHAT, kind: 1 }))).toEqual([
      "models[0].kind: must be one of chat, embedding (default chat)",
    ]);
  });

  it("one id is one kind on every provider: the second provider's entry is named", async () => {
    const two = JSON.stringify({
      providers: [PROVIDER, { ...PROVIDER, slug: "other" }],
      models: [EMBED, { ...CHAT, id: "local/embed", provider: "other" }],
    });
    expect(problemsOf(two)).toEqual([
      'models[1].kind: "chat", but models[0] serves "local/embed" as "embedding" (one id is one kind on every provider)',
    ]);
    // The same kind on two providers is one model with two endpoints.
    const ok = JSON.stringify({
      providers: [PROVIDER, { ...PROVIDER, slug: "other" }],
      models: [EMBED, { ...EMBED, provider: "other" }],
    });
    const part = buildFileProviders(parseProvidersFile(ok, {}));
    expect(part.models.map((m) => [m.id, m.kind, m.endpoints.map((e) => e.provider)])).toEqual([
      ["local/embed", "embedding", ["local", "other"]],
    ]);
    await Promise.all(part.providers.map((p) => p.adapter.close?.() ?? Promise.resolve()));
  });
});
