import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../helpers/fake-upstreams/anthropic.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { FAKE_OPENAI_KEY, startFakeOpenAI } from "../helpers/fake-upstreams/openai.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * Models from a GATEHOUSE_PROVIDERS_FILE, end to end through a listening server to local fake
 * upstreams (OpenAI-compatible and Anthropic): the cost in the answer is exactly the upstream's
 * tokens × the file's prices, and it is what the key's usage grows by and what the generation
 * record says. Then BYOK: the organization's own credential goes upstream (the fakes accept no
 * other), its cost is byok_usage, and include_byok_in_limit / include_byok_in_budgets decide
 * whether it counts against the key's limit and the workspace's budgets.
 */
/** Prices in nano-USD per token (3.1e-6 and 12.7e-6 USD): decimals a float product would get wrong. */
const PROMPT_NANO = 3_100;
const COMPLETION_NANO = 12_700;
/** The fakes' usage: OpenAI `ok` 12 prompt / 5 completion; Anthropic `ok` 15 (10 + 3 cache read + 2 cache write) / 6. */
const OPENAI_COST = (12 * PROMPT_NANO + 5 * COMPLETION_NANO) / 1e9;
const ANTHROPIC_COST = (15 * PROMPT_NANO + 6 * COMPLETION_NANO) / 1e9;
/** The pricey BYOK model: 0.001 and 0.002 USD per token, so 12 / 5 tokens cost 0.022 USD. */
const PRICEY_COST = 12 * 0.001 + 5 * 0.002;
/** The first text delta of the Anthropic fake's answers. */
const OK_WORD = "Hello";

let openai: FakeServer;
let anthropic: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  const priced = { prompt_price: "0.0000031", completion_price: "0.0000127" };
  file = writeProvidersFile(
    [
      { slug: "local", kind: "openai-compatible", base_url: `${openai.url}/v1`, api_key_env: "LOCAL_KEY" },
      { slug: "claude", kind: "anthropic", base_url: anthropic.url, api_key_env: "CLAUDE_KEY" },
      // The platform's own credentials for these two are ones the fakes refuse: only BYOK works.
      {
        slug: "own-openai",
        kind: "openai-compatible",
        base_url: `${openai.url}/v1`,
        api_key: "sk-platform-refused",
      },
      { slug: "own-claude", kind: "anthropic", base_url: anthropic.url, api_key: "sk-ant-platform-refused" },
    ],
    [
      { id: "local/ok", provider: "local", upstream_model: "ok", ...priced },
      {
        id: "anthropic/ok",
        provider: "claude",
        upstream_model: "ok",
        ...priced,
        context_length: 200_000,
        max_completion_tokens: 64_000,
      },
      {
        id: "anthropic/never-ends",
        provider: "claude",
        upstream_model: "never-ends",
        ...priced,
        context_length: 200_000,
        max_completion_tokens: 64_000,
      },
      { id: "byok/openai", provider: "own-openai", upstream_model: "ok", ...priced },
      { id: "byok/claude", provider: "own-claude", upstream_model: "ok", ...priced },
      {
        id: "byok/pricey",
        provider: "own-openai",
        upstream_model: "ok",
        prompt_price: 0.001,
        completion_price: 0.002,
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

interface KeyInfo {
  usage: number;
  byok_usage: number;
  byok_usage_daily: number;
  limit_remaining: number | null;
}

async function createKey(body: Record<string, unknown>): Promise<string> {
  const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: body });
  expect(r.statusCode).toBe(201);
  return r.json<{ key: string }>().key;
}

const keyInfo = async (key: string): Promise<KeyInfo> =>
  (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: KeyInfo }>().data;

/** POST /chat/completions with `key`: "Hi", max_tokens 10, then `body`. */
const ask = (key: string, body: Record<string, unknown>) => chat(s, key, { max_tokens: 10, ...body });

async function generation(key: string, id: string) {
  const r = await s.call({ method: "GET", url: `/api/v1/generation?id=${id}`, auth: key });
  expect(r.statusCode).toBe(200);
  return r.json<{ data: Record<string, any> }>().data;
}

describe("models from the providers file: exact cost", () => {
  for (const [model, cost, prompt, completion] of [
    ["local/ok", OPENAI_COST, 12, 5],
    ["anthropic/ok", ANTHROPIC_COST, 15, 6],
  ] as const) {
    for (const stream of [false, true]) {
      it(`${model} (${stream ? "stream" : "full"}): usage.cost = tokens × the file's prices = key usage growth = the record's cost`, async () => {
        const key = await createKey({ name: `${model}-${stream}` });
        const r = await ask(key, { model, stream });
        expect(r.status).toBe(200);
        expect(r.usage).toMatchObject({
          prompt_tokens: prompt,
          completion_tokens: completion,
          is_byok: false,
        });
        expect(r.usage!.cost).toBe(cost);
        expect((await keyInfo(key)).usage).toBe(cost);
        const g = await generation(key, r.id!);
        expect(g).toMatchObject({ model, usage: cost, total_cost: cost, is_byok: false });
        expect(g.tokens_prompt).toBe(prompt);
        expect(g.tokens_completion).toBe(completion);
      });
    }
  }
});

describe("a stream cut short before the upstream's final usage", () => {
  it("Anthropic: the prompt is charged as message_start counted it (15, 3 cached), the completion as counted", async () => {
    const key = await createKey({ name: "cut-short" });
    const gone = new AbortController();
    const r = await fetch(`${s.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "anthropic/never-ends",
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
      }),
      signal: gone.signal,
    });
    const id = r.headers.get("x-gatehouse-generation-id")!;
    const reader = r.body!.getReader();
    let seen = "";
    while (!seen.includes(OK_WORD)) seen += new TextDecoder().decode((await reader.read()).value);
    gone.abort(); // the client leaves; the upstream never finished
    let g: Record<string, any> | null = null;
    for (let i = 0; i < 100 && !g; i++) {
      const found = await s.call({ method: "GET", url: `/api/v1/generation?id=${id}`, auth: key });
      if (found.statusCode === 200) g = found.json<{ data: Record<string, any> }>().data;
      else await new Promise((d) => setTimeout(d, 50));
    }
    expect(g).toMatchObject({ cancelled: true, tokens_prompt: 15, native_tokens_cached: 3 });
    expect(g!.tokens_completion).toBeGreaterThan(0);
    const cost = (15 * PROMPT_NANO + g!.tokens_completion * COMPLETION_NANO) / 1e9;
    expect(g!.usage).toBeCloseTo(cost, 12);
    expect((await keyInfo(key)).usage).toBeCloseTo(cost, 12);
  });
});

describe("BYOK: the organization's credential goes upstream", () => {
  it("without a BYOK key the platform credential is used, and the fakes refuse it (so success below proves BYOK)", async () => {
    const key = await createKey({ name: "no-byok" });
    for (const model of ["byok/openai", "byok/claude"]) {
      const r = await ask(key, { model });
      expect(r.status).toBe(502);
      expect(r.text).toMatch(/upstream answered 401/);
    }
    expect(openai.requests.at(-1)!.headers.authorization).toBe("Bearer sk-platform-refused");
    expect(anthropic.requests.at(-1)!.headers["x-api-key"]).toBe("sk-ant-platform-refused");
    expect((await keyInfo(key)).usage).toBe(0);
  });

  it("with one, its secret is the Authorization / x-api-key header; the cost is byok_usage, not usage", async () => {
    for (const [provider, secret] of [
      ["own-openai", FAKE_OPENAI_KEY],
      ["own-claude", FAKE_ANTHROPIC_KEY],
    ]) {
      const r = await s.call({ method: "POST", url: "/api/v1/byok", payload: { provider, key: secret } });
      expect(r.statusCode).toBe(201);
    }
    s.app.gateway.byok.forget(s.organizationId);
    for (const [model, cost, upstream] of [
      ["byok/openai", OPENAI_COST, () => openai.requests.at(-1)!.headers.authorization],
      ["byok/claude", ANTHROPIC_COST, () => anthropic.requests.at(-1)!.headers["x-api-key"]],
    ] as const) {
      for (const stream of [false, true]) {
        const key = await createKey({ name: `${model}-${stream}` });
        const r = await ask(key, { model, stream });
        expect(r.status).toBe(200);
        expect(upstream()).toBe(model === "byok/openai" ? `Bearer ${FAKE_OPENAI_KEY}` : FAKE_ANTHROPIC_KEY);
        expect(r.usage).toMatchObject({ is_byok: true, cost: 0 });
        const info = await keyInfo(key);
        expect(info.usage).toBe(0);
        expect(info.byok_usage).toBe(cost);
        expect(info.byok_usage_daily).toBe(cost);
        const g = await generation(key, r.id!);
        expect(g).toMatchObject({ is_byok: true, usage: 0, upstream_inference_cost: cost });
      }
    }
  });

  it("include_byok_in_limit decides whether BYOK cost counts against the key's limit", async () => {
    // One pricey request costs 0.022 and reserves about 0.03: a 0.04 limit takes one, not two.
    const counted = await createKey({ name: "byok-counted", limit: 0.04, include_byok_in_limit: true });
    const free = await createKey({ name: "byok-free", limit: 0.04, include_byok_in_limit: false });
    expect((await ask(counted, { model: "byok/pricey" })).status).toBe(200);
    const refused = await ask(counted, { model: "byok/pricey" });
    expect([402, 403]).toContain(refused.status);
    expect(JSON.parse(refused.text).error.metadata).toMatchObject({ scope: "key", limit: 0.04 });
    expect((await keyInfo(counted)).byok_usage).toBeCloseTo(PRICEY_COST, 12);
    for (let i = 0; i < 3; i++) expect((await ask(free, { model: "byok/pricey" })).status).toBe(200);
    const info = await keyInfo(free);
    expect(info.usage).toBe(0);
    expect(info.byok_usage).toBeCloseTo(3 * PRICEY_COST, 12);
    // Over its limit in BYOK spend, yet the limit (credits) is untouched.
    expect(info.limit_remaining).toBe(0.04);
  });

  it("the workspace's include_byok_in_budgets decides whether BYOK cost counts against its budgets", async () => {
    const ws = await s.call({
      method: "POST",
      url: "/api/v1/workspaces",
      payload: { name: "BYOK budget", slug: "byok-budget" },
    });
    expect(ws.statusCode).toBe(201);
    const wsId = ws.json<{ data: { id: string } }>().data.id;
    const byok = await s.call({
      method: "POST",
      url: "/api/v1/byok",
      payload: { provider: "own-openai", key: FAKE_OPENAI_KEY, workspace_id: wsId },
    });
    expect(byok.statusCode).toBe(201);
    s.app.gateway.byok.forget(s.organizationId);
    const budget = async (include: boolean) => {
      const r = await s.call({
        method: "PUT",
        url: `/api/v1/workspaces/${wsId}/budgets/daily`,
        payload: { limit_usd: 0.04, include_byok_in_budgets: include },
      });
      expect(r.statusCode).toBe(200);
      return r.json<{ data: { spent_usd: number } }>().data.spent_usd;
    };
    expect(await budget(false)).toBe(0);
    const key = await createKey({ name: "in-budget-ws", workspace_id: wsId });
    for (let i = 0; i < 3; i++) expect((await ask(key, { model: "byok/pricey" })).status).toBe(200);
    // BYOK spend outside the budgets: 0.066 spent, the 0.04 budget untouched.
    expect(await budget(false)).toBe(0);
    expect((await keyInfo(key)).byok_usage).toBeCloseTo(3 * PRICEY_COST, 12);
    // Counted from now on: the same spend is over the budget, and the next request is refused.
    expect(await budget(true)).toBeCloseTo(3 * PRICEY_COST, 12);
    const refused = await ask(key, { model: "byok/pricey" });
    expect(refused.status).toBe(403);
    const e = JSON.parse(refused.text) as { error: { message: string; metadata: Record<string, unknown> } };
    expect(e.error.message).toMatch(/Workspace budget exceeded \(daily\)/);
    expect(e.error.metadata).toMatchObject({ scope: "workspace", interval: "daily", limit: 0.04 });
  });
});
