import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../helpers/fake-upstreams/anthropic.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { FAKE_OPENAI_KEY, startFakeOpenAI } from "../helpers/fake-upstreams/openai.js";
import { chat } from "../helpers/gateway-client.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * Cache prices end to end, through a listening server to the fake upstreams: a model whose
 * providers-file entry has `cache_read_price` and `cache_write_price` is charged its cache reads
 * and writes at those prices, the rest of the prompt at the prompt price. The answer's
 * `usage.cost` is that split cost exactly, its `cost_details` add up to it, the key's usage grows
 * by it, and the record's `usage_cache` (analytics) is the cache part. For both kinds of provider:
 * Anthropic reports its token classes apart (input excludes cache reads and writes),
 * OpenAI-compatible upstreams count them inside `prompt_tokens`.
 */

/** nano-USD per token: prompt 3100, completion 12700, cache read 310, cache write 3875 (above the prompt's). */
const PRICES = {
  prompt_price: "0.0000031",
  completion_price: "0.0000127",
  cache_read_price: "0.00000031",
  cache_write_price: "0.000003875",
};

interface Expected {
  model: string;
  prompt: number;
  completion: number;
  cached: number;
  written: number;
  /** nano-USD */
  promptCost: number;
  completionCost: number;
  cacheCost: number;
}

const CASES: Expected[] = [
  // OpenAI `ok`: 12 prompt (4 cached), 5 completion: 8 × 3100 + 4 × 310 = 26,040; 5 × 12,700 = 63,500
  {
    model: "local/cached",
    prompt: 12,
    completion: 5,
    cached: 4,
    written: 0,
    promptCost: 26_040,
    completionCost: 63_500,
    cacheCost: 1_240,
  },
  // OpenAI-compatible `cache-write`: 12 prompt (4 cached, 3 written): 5 × 3100 + 1240 + 3 × 3875 = 28,365
  {
    model: "local/cache-write",
    prompt: 12,
    completion: 5,
    cached: 4,
    written: 3,
    promptCost: 28_365,
    completionCost: 63_500,
    cacheCost: 12_865,
  },
  // Anthropic `ok`: input 10 + 3 cache read + 2 cache write = 15 prompt, 6 completion:
  // 10 × 3100 + 3 × 310 + 2 × 3875 = 39,680; 6 × 12,700 = 76,200
  {
    model: "anthropic/cached",
    prompt: 15,
    completion: 6,
    cached: 3,
    written: 2,
    promptCost: 39_680,
    completionCost: 76_200,
    cacheCost: 8_680,
  },
];

const usd = (nano: number): number => nano / 1e9;

let openai: FakeServer;
let anthropic: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  file = writeProvidersFile(
    [
      { slug: "local", kind: "openai-compatible", base_url: `${openai.url}/v1`, api_key_env: "LOCAL_KEY" },
      { slug: "claude", kind: "anthropic", base_url: anthropic.url, api_key_env: "CLAUDE_KEY" },
    ],
    [
      { id: "local/cached", provider: "local", upstream_model: "ok", ...PRICES },
      { id: "local/cache-write", provider: "local", upstream_model: "cache-write", ...PRICES },
      {
        id: "anthropic/cached",
        provider: "claude",
        upstream_model: "ok",
        ...PRICES,
        context_length: 200_000,
        max_completion_tokens: 64_000,
      },
    ],
  );
  s = await startListening({
    clock: systemClock,
    env: {
      GATEHOUSE_PROVIDERS_FILE: file.path,
      LOCAL_KEY: FAKE_OPENAI_KEY,
      CLAUDE_KEY: FAKE_ANTHROPIC_KEY,
      RATE_LIMIT_MANAGEMENT_MAX: "100000",
    },
  });
});

afterAll(async () => {
  await s?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
  file?.remove();
});

async function createKey(name: string): Promise<string> {
  const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name } });
  expect(r.statusCode).toBe(201);
  return r.json<{ key: string }>().key;
}

const keyUsage = async (key: string): Promise<number> =>
  (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>().data
    .usage;

/** The record's money as analytics has it: `usage` (credits_usage) and `usage_cache`, for one generation. */
async function recorded(id: string): Promise<{ usage: number; usage_cache: number }> {
  await s.app.gateway.recorder.settled();
  const iso = (ms: number) => new Date(ms).toISOString();
  const r = await s.call({
    method: "POST",
    url: "/api/v1/analytics/query",
    payload: {
      metrics: ["credits_usage", "usage_cache"],
      filters: [{ field: "generation_id", operator: "eq", value: id }],
      time_range: { start: iso(Date.now() - 3_600_000), end: iso(Date.now() + 3_600_000) },
    },
  });
  expect(r.statusCode, r.body).toBe(200);
  const rows = r.json<{ data: { data: { credits_usage: number; usage_cache: number }[] } }>().data.data;
  expect(rows).toHaveLength(1);
  return { usage: rows[0]!.credits_usage, usage_cache: rows[0]!.usage_cache };
}

describe("cache reads and writes at the providers file's cache prices", () => {
  for (const c of CASES) {
    for (const stream of [false, true]) {
      it(`${c.model} (${stream ? "stream" : "full"}): usage.cost = the split cost = key usage growth; usage_cache = the cache part`, async () => {
        const key = await createKey(`${c.model}-${stream}`);
        const r = await chat(s, key, { model: c.model, stream, max_tokens: 10 });
        expect(r.status, r.text).toBe(200);
        const cost = usd(c.promptCost + c.completionCost);
        expect(r.usage).toMatchObject({
          prompt_tokens: c.prompt,
          completion_tokens: c.completion,
          prompt_tokens_details: { cached_tokens: c.cached, cache_write_tokens: c.written },
          is_byok: false,
          cost_details: {
            upstream_inference_cost: null,
            upstream_inference_prompt_cost: usd(c.promptCost),
            upstream_inference_completions_cost: usd(c.completionCost),
          },
        });
        expect(r.usage!.cost).toBe(cost);
        // Not what the prompt at the prompt price alone would cost.
        expect(r.usage!.cost).not.toBe(usd(c.prompt * 3_100 + c.completion * 12_700));
        expect(await keyUsage(key)).toBe(cost);
        expect(await recorded(r.id!)).toEqual({ usage: cost, usage_cache: usd(c.cacheCost) });
      });
    }
  }

  it("GET /models shows the cache prices as input_cache_read and input_cache_write", async () => {
    const r = await s.call({ method: "GET", url: "/api/v1/models", auth: null });
    expect(r.statusCode).toBe(200);
    const m = r
      .json<{ data: { id: string; pricing: Record<string, string> }[] }>()
      .data.find((x) => x.id === "anthropic/cached");
    expect(m?.pricing).toEqual({
      prompt: "0.0000031",
      completion: "0.0000127",
      input_cache_read: "0.00000031",
      input_cache_write: "0.000003875",
    });
  });
});
