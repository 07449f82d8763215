import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { countPromptTokens } from "../../src/gateway/tokens/count-tokens.js";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../helpers/fake-upstreams/anthropic.js";
import { startFakeServer, type FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { chat, HI } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * The upstream may generate no more than the hold covers. A client's max_tokens above the model's
 * maximum, a request without one whose hold was capped by what the key has left, or a request for
 * several completions would otherwise let the upstream generate past the reservation, and the
 * charge past the key's limit. The upstream here is greedy: it always generates every completion
 * token it is allowed (all of them when it is given no cap), and reports them in its usage. Its
 * prompt count is Gatehouse's own estimate (as the mock provider's): what an upstream that counts
 * the prompt differently does is documented in docs/gateway.md, not tested here.
 */
const MODEL_MAX = 1000;
/** USD per token. */
const PROMPT_PRICE = 0.000001;
const COMPLETION_PRICE = 0.000002;
/** What the greedy upstream generates when it is given no cap. */
const UNCAPPED = 50_000;
/** Gatehouse's estimate of the prompt every request here sends (HI). */
const PROMPT_TOKENS = countPromptTokens([...HI]);

let greedy: FakeServer;
let anthropic: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;

/** The greedy upstream's cap for a forwarded body: the smaller of the two fields it was given. */
function capOf(body: { max_tokens?: number; max_completion_tokens?: number }): number {
  return Math.min(body.max_tokens ?? UNCAPPED, body.max_completion_tokens ?? UNCAPPED);
}

beforeAll(async () => {
  greedy = await startFakeServer((req, res) => {
    const body = req.body as { messages: unknown[]; max_tokens?: number; max_completion_tokens?: number };
    const completion = capOf(body);
    const prompt = countPromptTokens(body.messages);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "chatcmpl-greedy",
        object: "chat.completion",
        created: 1,
        model: "greedy",
        choices: [
          { index: 0, message: { role: "assistant", content: "word ".repeat(20) }, finish_reason: "length" },
        ],
        usage: {
          prompt_tokens: prompt,
          completion_tokens: completion,
          total_tokens: prompt + completion,
        },
      }),
    );
  });
  anthropic = await startFakeAnthropic();
  const model = (id: string, provider: string, upstream: string) => ({
    id,
    provider,
    upstream_model: upstream,
    prompt_price: PROMPT_PRICE,
    completion_price: COMPLETION_PRICE,
    max_completion_tokens: MODEL_MAX,
  });
  file = writeProvidersFile(
    [
      { slug: "greedy", kind: "openai-compatible", base_url: `${greedy.url}/v1`, api_key: "sk-greedy" },
      { slug: "claude", kind: "anthropic", base_url: anthropic.url, api_key: FAKE_ANTHROPIC_KEY },
      // As OpenAI's reasoning models, which refuse max_tokens.
      {
        slug: "reasoner",
        kind: "openai-compatible",
        base_url: `${greedy.url}/v1`,
        api_key: "sk-greedy",
        max_tokens_field: "max_completion_tokens",
      },
    ],
    [
      model("greedy/max", "greedy", "greedy"),
      model("claude/ok", "claude", "ok"),
      model("reasoner/max", "reasoner", "greedy"),
    ],
  );
  s = await startListening({ clock: systemClock, env: { GATEHOUSE_PROVIDERS_FILE: file.path } });
});

afterAll(async () => {
  await s?.close();
  await Promise.all([greedy?.close(), anthropic?.close()]);
  file?.remove();
});

async function newKey(limit: number): Promise<string> {
  const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "cap", limit } });
  return r.json<{ key: string }>().key;
}

const usageOf = async (key: string): Promise<number> =>
  (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>().data
    .usage;

const lastForwarded = (server: FakeServer): Record<string, unknown> =>
  server.requests[server.requests.length - 1]!.body as Record<string, unknown>;

describe("the completion tokens forwarded are the ones reserved", () => {
  it("a max_tokens above the model's maximum is forwarded as the maximum", async () => {
    const key = await newKey(10);
    const r = await chat(s, key, { model: "greedy/max", max_tokens: 100_000 });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-gatehouse-max-tokens")).toBe(String(MODEL_MAX));
    const sent = lastForwarded(greedy);
    expect(sent.max_tokens).toBe(MODEL_MAX);
    expect(sent).not.toHaveProperty("max_completion_tokens");
    expect(r.json.usage.completion_tokens).toBe(MODEL_MAX);
  });

  it("max_completion_tokens alone is forwarded as itself, capped", async () => {
    const key = await newKey(10);
    const r = await chat(s, key, { model: "greedy/max", max_completion_tokens: 300 });
    expect(r.status).toBe(200);
    const sent = lastForwarded(greedy);
    expect(sent.max_completion_tokens).toBe(300);
    expect(sent).not.toHaveProperty("max_tokens");
    const over = await chat(s, key, { model: "greedy/max", max_completion_tokens: 5000, max_tokens: null });
    expect(over.status).toBe(200);
    const sentOver = lastForwarded(greedy);
    expect(sentOver.max_completion_tokens).toBe(MODEL_MAX);
    expect(sentOver).not.toHaveProperty("max_tokens");
  });

  it("both fields: the smaller is reserved, and both carry it", async () => {
    const key = await newKey(10);
    const r = await chat(s, key, { model: "greedy/max", max_tokens: 500, max_completion_tokens: 200 });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-gatehouse-max-tokens")).toBe("200");
    const sent = lastForwarded(greedy);
    expect(sent.max_tokens).toBe(200);
    expect(sent.max_completion_tokens).toBe(200);
    expect(r.json.usage.completion_tokens).toBe(200);
  });

  it("Anthropic receives the smaller of the two as its max_tokens", async () => {
    const key = await newKey(10);
    const r = await chat(s, key, { model: "claude/ok", max_tokens: 10, max_completion_tokens: 100_000 });
    expect(r.status).toBe(200);
    expect(lastForwarded(anthropic).max_tokens).toBe(10);
  });

  it("a provider with max_tokens_field max_completion_tokens gets the cap in that field only", async () => {
    const key = await newKey(10);
    for (const [body, cap] of [
      [{}, MODEL_MAX],
      [{ max_tokens: 50 }, 50],
      [{ max_tokens: 70, max_completion_tokens: 60 }, 60],
    ] as const) {
      const r = await chat(s, key, { model: "reasoner/max", ...body });
      expect(r.status).toBe(200);
      const sent = lastForwarded(greedy);
      expect(sent.max_completion_tokens).toBe(cap);
      expect(sent).not.toHaveProperty("max_tokens");
      expect(r.json.usage.completion_tokens).toBe(cap);
    }
  });

  it("a hold capped by what the key has left caps the upstream too: the key never goes over", async () => {
    // Room for the prompt and a few hundred completion tokens, not the model's maximum.
    const limit = 0.0009;
    const key = await newKey(limit);
    const r = await chat(s, key, { model: "greedy/max" });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-gatehouse-max-tokens-capped")).toBe("true");
    const reserved = Number(r.headers.get("x-gatehouse-max-tokens"));
    expect(reserved).toBeGreaterThan(0);
    expect(reserved).toBeLessThan(MODEL_MAX);
    expect(lastForwarded(greedy).max_tokens).toBe(reserved);
    expect(r.json.usage.completion_tokens).toBe(reserved);
    expect(await usageOf(key)).toBeLessThanOrEqual(limit);
  });

  it("requests asking for more than the model's maximum never take a key past its limit", async () => {
    // Each answer costs the prompt plus MODEL_MAX completion tokens (~0.00201 USD): five fit.
    const limit = 0.011;
    const key = await newKey(limit);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      statuses.push((await chat(s, key, { model: "greedy/max", max_tokens: 100_000 })).status);
    }
    expect(statuses.filter((x) => x === 200).length).toBe(5);
    expect(statuses.slice(5).every((x) => x === 402 || x === 403)).toBe(true);
    const usage = await usageOf(key);
    expect(usage).toBeLessThanOrEqual(limit);
    expect(usage).toBeCloseTo(5 * (PROMPT_TOKENS * PROMPT_PRICE + MODEL_MAX * COMPLETION_PRICE), 9);
  });

  it("the mock provider too: a long prompt with max_tokens far above the maximum stays within the limit", async () => {
    const limit = 0.008;
    const key = await newKey(limit);
    const words = Array.from({ length: 1500 }, (_, i) => `w${i}`).join(" ");
    const r = await chat(s, key, {
      model: "mock/echo",
      max_tokens: 100_000,
      messages: [{ role: "user", content: words }],
    });
    expect(r.status).toBe(200);
    const reserved = Number(r.headers.get("x-gatehouse-max-tokens"));
    expect(reserved).toBeGreaterThan(0);
    expect(r.json.usage.completion_tokens).toBeLessThanOrEqual(reserved);
    expect(await usageOf(key)).toBeLessThanOrEqual(limit);
  });

  it("n other than 1 is refused, naming the field; n: 1 is forwarded", async () => {
    const key = await newKey(10);
    const before = greedy.requests.length;
    const r = await chat(s, key, { model: "greedy/max", max_tokens: 5, n: 3 });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/^n: /);
    expect(greedy.requests.length).toBe(before);
    const one = await chat(s, key, { model: "greedy/max", max_tokens: 5, n: 1 });
    expect(one.status).toBe(200);
    expect(lastForwarded(greedy).n).toBe(1);
  });
});
