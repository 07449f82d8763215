import { describe, expect, it } from "vitest";
import { modelEndpointsView, modelView } from "../../src/gateway/catalog/catalog-views.js";
import type { Catalog, ModelEntry } from "../../src/gateway/catalog/catalog.js";
import { buildFileProviders } from "../../src/gateway/catalog/load-providers-file.js";
import { ProvidersFileError, parseProvidersFile } from "../../src/gateway/catalog/providers-file.js";
import { usageWire } from "../../src/gateway/chat/wire.js";
import { anthropicUsage } from "../../src/gateway/providers/anthropic/anthropic-response.js";
import { openAIUsage } from "../../src/gateway/providers/openai/openai-compatible.js";
import { decodeEntry, encodeEntry } from "../../src/gateway/recording/journal.js";
import { activityRowOf } from "../../src/gateway/recording/generation-row.js";
import { generationRecord } from "../../src/gateway/recording/record-generation.js";
import { tokenCost } from "../../src/gateway/reservations/token-cost.js";
import { MessagesStreamEncoder } from "../../src/gateway/surfaces/messages/messages-stream.js";
import { responsesUsage } from "../../src/gateway/surfaces/responses/responses-items.js";
import { servedGeneration } from "../helpers/recording.js";

/**
 * Cache prices from the providers file to the wire and the record: the file's optional
 * `cache_read_price` / `cache_write_price`, the endpoint's prices, /models' `input_cache_read` /
 * `input_cache_write`, each adapter's cache-write count, the chat usage's `cache_write_tokens` and
 * cost split, and the record's `usage_cache`.
 */

const PROVIDER = { slug: "local", kind: "openai-compatible", base_url: "http://127.0.0.1:9000/v1" };
const CHAT = {
  id: "local/tiny",
  provider: "local",
  upstream_model: "tiny",
  prompt_price: 0.000003,
  completion_price: 0.000015,
  context_length: 8192,
  max_completion_tokens: 1024,
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

describe("providers file: cache prices", () => {
  it("are optional, exact, and reach the endpoint (null when absent)", () => {
    const spec = parseProvidersFile(
      fileOf(
        { ...CHAT, cache_read_price: 0.0000003, cache_write_price: "0.00000375" },
        { ...CHAT, id: "local/plain" },
        { ...CHAT, id: "local/nulls", cache_read_price: null, cache_write_price: null },
        { ...CHAT, id: "local/free-reads", cache_read_price: 0 },
      ),
      {},
    );
    expect(spec.models.map((m) => [m.id, m.cacheReadPricePerMTokNano, m.cacheWritePricePerMTokNano])).toEqual(
      [
        // 0.0000003 × 1e15 is 300000000.00000006 as a double: read as the decimal written.
        ["local/tiny", 300_000_000n, 3_750_000_000n],
        ["local/plain", null, null],
        ["local/nulls", null, null],
        ["local/free-reads", 0n, null],
      ],
    );
    const [tiny] = buildFileProviders(spec).models;
    expect(tiny!.endpoints[0]).toMatchObject({
      promptPricePerMTokNano: 3_000_000_000n,
      cacheReadPricePerMTokNano: 300_000_000n,
      cacheWritePricePerMTokNano: 3_750_000_000n,
    });
  });

  it("are validated as the other prices, every problem naming its field", () => {
    expect(
      problemsOf(
        fileOf(
          { ...CHAT, cache_read_price: -0.000001, cache_write_price: "cheap" },
          { ...CHAT, id: "local/b", cache_read_price: 3, cache_write_price: 1e-16 },
          { ...CHAT, id: "local/c", cache_read_price: true, cache_write_price: [0.1] },
        ),
      ),
    ).toEqual([
      "models[0].cache_read_price: must be a non-negative decimal number (USD per token)",
      "models[0].cache_write_price: must be a non-negative decimal number (USD per token)",
      "models[1].cache_read_price: is USD per token: 3 is over 0.01 (a price per million tokens belongs divided by 1e6)",
      "models[1].cache_write_price: is finer than 1e-15 USD per token (USD per token)",
      "models[2].cache_read_price: must be a number of USD per token",
      "models[2].cache_write_price: must be a number of USD per token",
    ]);
  });

  it("may be above the prompt price (a cache write usually is)", () => {
    const [m] = parseProvidersFile(fileOf({ ...CHAT, cache_write_price: 0.00000375 }), {}).models;
    expect(m!.cacheWritePricePerMTokNano).toBeGreaterThan(m!.promptPricePerMTokNano);
  });

  it("are refused on an embedding model, which has no prompt cache", () => {
    const embed = {
      id: "local/embed",
      kind: "embedding",
      provider: "local",
      upstream_model: "e",
      prompt_price: 0.00000002,
      context_length: 8192,
    };
    expect(problemsOf(fileOf({ ...embed, cache_read_price: 0.00000001, cache_write_price: 0 }))).toEqual([
      "models[0].cache_read_price: does not apply to kind embedding (an embedding model reads no prompt cache)",
      "models[0].cache_write_price: does not apply to kind embedding (an embedding model writes no prompt cache)",
    ]);
  });
});

describe("GET /models pricing", () => {
  const endpoint = {
    provider: "local",
    upstreamModel: "tiny",
    promptPricePerMTokNano: 3_000_000_000n,
    completionPricePerMTokNano: 15_000_000_000n,
    cacheReadPricePerMTokNano: 300_000_000n as bigint | null,
    cacheWritePricePerMTokNano: 3_750_000_000n as bigint | null,
    contextLength: 8192,
    maxCompletionTokens: 1024,
    supportedParameters: ["max_tokens" as const],
  };
  const model = (e: typeof endpoint): ModelEntry => ({
    id: "local/tiny",
    name: "Tiny",
    kind: "chat",
    isMock: false,
    endpoints: [e],
  });
  const catalog = (m: ModelEntry): Catalog => ({ providers: new Map(), models: new Map([[m.id, m]]) });

  it("shows input_cache_read and input_cache_write (USD per token, strings) when given", () => {
    const m = model(endpoint);
    const priced = {
      prompt: "0.000003",
      completion: "0.000015",
      input_cache_read: "0.0000003",
      input_cache_write: "0.00000375",
    };
    const view = modelView(m, 0) as { pricing: unknown; endpoints: { pricing: unknown }[] };
    expect(view.pricing).toEqual(priced);
    expect(view.endpoints[0]!.pricing).toEqual(priced);
    const endpoints = modelEndpointsView(catalog(m), m) as { endpoints: { pricing: unknown }[] };
    expect(endpoints.endpoints[0]!.pricing).toEqual(priced);
  });

  it("leaves them out when not given, and shows a free cache as 0", () => {
    const plain = modelView(
      model({ ...endpoint, cacheReadPricePerMTokNano: null, cacheWritePricePerMTokNano: null }),
      0,
    );
    expect(plain.pricing).toEqual({ prompt: "0.000003", completion: "0.000015" });
    const free = modelView(
      model({ ...endpoint, cacheReadPricePerMTokNano: 0n, cacheWritePricePerMTokNano: null }),
      0,
    );
    expect(free.pricing).toEqual({ prompt: "0.000003", completion: "0.000015", input_cache_read: "0" });
  });
});

describe("cache writes from each kind of upstream", () => {
  it("Anthropic: cache_creation_input_tokens are the writes, inside the prompt count", () => {
    expect(
      anthropicUsage({
        input_tokens: 10,
        cache_read_input_tokens: 3,
        cache_creation_input_tokens: 2,
        output_tokens: 6,
      }),
    ).toEqual({
      promptTokens: 15,
      completionTokens: 6,
      cachedTokens: 3,
      cacheWriteTokens: 2,
      reasoningTokens: 0,
    });
  });

  it("OpenAI-compatible: prompt_tokens_details.cache_write_tokens when the upstream gives it, else 0", () => {
    const u = { prompt_tokens: 12, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 4 } };
    expect(openAIUsage(u)).toMatchObject({ promptTokens: 12, cachedTokens: 4, cacheWriteTokens: 0 });
    expect(
      openAIUsage({ ...u, prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 3 } }),
    ).toMatchObject({ promptTokens: 12, cachedTokens: 4, cacheWriteTokens: 3 });
  });
});

describe("the chat usage and the record", () => {
  const prices = {
    promptPerMTokNano: 3_100_000_000n,
    completionPerMTokNano: 12_700_000_000n,
    cacheReadPerMTokNano: 310_000_000n,
    cacheWritePerMTokNano: 3_875_000_000n,
  };
  const usage = {
    promptTokens: 15,
    completionTokens: 6,
    cachedTokens: 3,
    cacheWriteTokens: 2,
    reasoningTokens: 0,
  };
  const cost = tokenCost(prices, usage);

  it("usage: cache_write_tokens, and cost_details whose parts add up to the cost", () => {
    // 10 × 3100 + 3 × 310 + 2 × 3875 = 39,680 (prompt); 6 × 12,700 = 76,200 (completion)
    expect(cost).toEqual({
      totalNano: 115_880n,
      promptNano: 39_680n,
      completionNano: 76_200n,
      cacheNano: 8_680n,
    });
    const wire = usageWire({ usage, cost, costNano: cost.totalNano, byokCostNano: 0n, isByok: false });
    expect(wire).toEqual({
      prompt_tokens: 15,
      completion_tokens: 6,
      total_tokens: 21,
      prompt_tokens_details: { cached_tokens: 3, cache_write_tokens: 2 },
      completion_tokens_details: { reasoning_tokens: 0 },
      cost: 0.00011588,
      is_byok: false,
      cost_details: {
        upstream_inference_cost: null,
        upstream_inference_prompt_cost: 0.00003968,
        upstream_inference_completions_cost: 0.0000762,
      },
    });
    // BYOK: nothing charged to credits, the same split of what the provider bills.
    const byok = usageWire({ usage, cost, costNano: 0n, byokCostNano: cost.totalNano, isByok: true });
    expect(byok).toMatchObject({
      cost: 0,
      is_byok: true,
      cost_details: {
        upstream_inference_cost: 0.00011588,
        upstream_inference_prompt_cost: 0.00003968,
        upstream_inference_completions_cost: 0.0000762,
      },
    });
  });

  it("the other surfaces show the writes: Responses' input_tokens_details, Messages' input classes", () => {
    const wire = usageWire({ usage, cost, costNano: cost.totalNano, byokCostNano: 0n, isByok: false });
    expect(responsesUsage(wire)).toMatchObject({
      input_tokens: 15,
      input_tokens_details: { cached_tokens: 3, cache_write_tokens: 2 },
      cost_details: { upstream_inference_input_cost: 0.00003968, upstream_inference_output_cost: 0.0000762 },
    });
    // message_start, from the upstream's early count (ProviderChunk.prompt)
    const start = new MessagesStreamEncoder({ id: "gen-1", model: "m", provider: "p" }).start(usage);
    expect(start).toContain('"input_tokens":10,"cache_creation_input_tokens":2,"cache_read_input_tokens":3');
  });

  it("the record's usage_cache is the cache part, in the wire record, the stored row and the journal", () => {
    const key = {
      id: 1,
      hash: "a".repeat(64),
      organizationId: "11111111-1111-4111-8111-111111111111",
      workspaceId: "22222222-2222-4222-8222-222222222222",
      creatorUserId: null,
    };
    const g = servedGeneration(key, {
      promptTokens: 15,
      completionTokens: 6,
      cachedTokens: 3,
      costNano: cost.totalNano,
      cacheCostNano: cost.cacheNano,
    });
    expect(generationRecord(g)).toMatchObject({ usage: 0.00011588, usage_cache: 0.00000868 });
    expect(activityRowOf(g)).toMatchObject({ usage_nano: 115_880n, usage_cache_nano: 8_680n });
    expect(decodeEntry(encodeEntry(g))).toMatchObject({ cacheCostNano: 8_680n });
    // An entry journaled before cache prices has none: 0.
    const old = JSON.parse(encodeEntry(g)) as Record<string, unknown>;
    delete old.cacheCostNano;
    expect(decodeEntry(JSON.stringify(old))).toMatchObject({ cacheCostNano: 0n, costNano: 115_880n });
    expect(decodeEntry(JSON.stringify({ ...old, cacheCostNano: "-5" }))).toBeNull();
  });
});
