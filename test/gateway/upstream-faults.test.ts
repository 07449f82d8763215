import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { countPromptTokens, countTextTokens } from "../../src/gateway/tokens/count-tokens.js";
import { systemClock } from "../../src/lib/clock.js";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../helpers/fake-upstreams/anthropic.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import {
  EARLY_USAGE,
  EARLY_USAGE_TEXT,
  FAKE_OPENAI_KEY,
  FINAL_USAGE,
  startFakeOpenAI,
} from "../helpers/fake-upstreams/openai.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { chat, postChat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * Upstream faults at the gateway, through a real listening server and local fake upstreams named
 * in a GATEHOUSE_PROVIDERS_FILE: first-byte timeouts (the provider's `timeout_ms` governs), a
 * stream that stalls after its first chunk (`idle_timeout_ms`), a stream cut short after a stale
 * usage, and 429 with Retry-After. Before
 * the first byte each failure falls back to the next model or provider; with none left the answer
 * is the spec's envelope. Every hold is finished exactly once.
 */
const PROMPT_PRICE = 0.000001;
const COMPLETION_PRICE = 0.000002;
/** The fake OpenAI upstream's `ok` usage (12 prompt, 5 completion), and the fake Anthropic's (15, 6). */
const OPENAI_OK_COST = 12 * PROMPT_PRICE + 5 * COMPLETION_PRICE;
const ANTHROPIC_OK_COST = 15 * PROMPT_PRICE + 6 * COMPLETION_PRICE;
/**
 * What an attempt that timed out after its request reached the provider is charged: the prompt's
 * estimate (the tests' "Hi"), as a cancelled generation of its own (abandoned-charge.test.ts).
 */
const TIMED_OUT_COST = countPromptTokens([{ role: "user", content: "Hi" }]) * PROMPT_PRICE;

let openai: FakeServer;
let anthropic: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;
let key: string;
/** Every finish of a hold, in order: `release <id>` or `settle <id>`. */
const finishes: string[] = [];

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  const model = (id: string, provider: string, upstream: string) => ({
    id,
    provider,
    upstream_model: upstream,
    prompt_price: PROMPT_PRICE,
    completion_price: COMPLETION_PRICE,
  });
  file = writeProvidersFile(
    [
      // Impatient: 150 ms for the first byte.
      {
        slug: "fast",
        kind: "openai-compatible",
        base_url: `${openai.url}/v1`,
        api_key_env: "LOCAL_KEY",
        timeout_ms: 150,
      },
      // Patient for the first byte (longer than the gateway's default below), strict mid-stream.
      {
        slug: "patient",
        kind: "openai-compatible",
        base_url: `${openai.url}/v1`,
        api_key_env: "LOCAL_KEY",
        timeout_ms: 3_000,
        idle_timeout_ms: 300,
      },
      {
        slug: "claude",
        kind: "anthropic",
        base_url: anthropic.url,
        api_key: FAKE_ANTHROPIC_KEY,
        timeout_ms: 150,
      },
      // The models that answer at once go through providers with a generous deadline: on a
      // loaded machine 150 ms can pass before even an immediate answer's first byte (a 524 where
      // the test expects the answer).
      {
        slug: "calm",
        kind: "openai-compatible",
        base_url: `${openai.url}/v1`,
        api_key_env: "LOCAL_KEY",
        timeout_ms: 5_000,
      },
      {
        slug: "claude-calm",
        kind: "anthropic",
        base_url: anthropic.url,
        api_key: FAKE_ANTHROPIC_KEY,
        timeout_ms: 5_000,
      },
    ],
    [
      model("file/hang", "fast", "no-first-byte"),
      model("file/ok", "calm", "ok"),
      model("file/limited", "calm", "rate-limited"),
      model("file/slow", "patient", "slow-headers"),
      model("file/stall", "patient", "stall"),
      model("file/early-usage", "calm", "early-usage-reset"),
      model("file/early-usage-end", "calm", "early-usage-end"),
      model("file/final-usage", "calm", "early-then-final-usage"),
      model("claude/hang", "claude", "no-first-byte"),
      model("claude/limited", "claude-calm", "rate-limited"),
      model("claude/ok", "claude-calm", "ok"),
    ],
  );
  s = await startListening({
    clock: systemClock,
    env: {
      GATEHOUSE_PROVIDERS_FILE: file.path,
      LOCAL_KEY: FAKE_OPENAI_KEY,
      // The gateway's own default is shorter than `patient`'s timeout_ms: the provider's must win.
      GATEHOUSE_UPSTREAM_TIMEOUT_MS: "200",
    },
  });
  const store = s.app.gateway.holds.store;
  const release = store.release.bind(store);
  const settle = store.settle.bind(store);
  store.release = async (id) => {
    finishes.push(`release ${id}`);
    return release(id);
  };
  store.settle = async (id, charge, chargedNano) => {
    finishes.push(`settle ${id}`);
    return settle(id, charge, chargedNano);
  };
  key = (await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "faults", limit: 10 } })).json<{
    key: string;
  }>().key;
});

afterAll(async () => {
  await s?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
  file?.remove();
});

afterEach(async () => {
  // Nothing is left holding money after any test: every hold was settled or released (a hold
  // lasts until its record commits, which may follow the answer).
  await s.app.gateway.recorder.settled();
  expect(await s.app.gateway.holds.store.openCount()).toBe(0);
  expect(s.app.gateway.holds.liveCount).toBe(0);
});

const usage = async (): Promise<number> =>
  (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>().data
    .usage;

/** POST /chat/completions with the test key ("Hi", max_tokens 50, unless `body` says otherwise). */
const ask = (body: Record<string, unknown>) => chat(s, key, { max_tokens: 50, ...body });

async function generation(id: string) {
  const r = await s.call({ method: "GET", url: `/api/v1/generation?id=${id}`, auth: key });
  expect(r.statusCode).toBe(200);
  return r.json<{ data: Record<string, any> }>().data;
}

/** The finishes of one generation's holds: exactly one per attempt, in attempt order. */
const finishesOf = (genId: string) => finishes.filter((f) => f.split(" ")[1]!.startsWith(`${genId}:`));

describe("first-byte timeout: the provider's timeout_ms", () => {
  for (const stream of [false, true]) {
    it(`an upstream that never answers falls back to the next model of models (${stream ? "stream" : "full"})`, async () => {
      const before = await usage();
      const r = await ask({ models: ["file/hang", "file/ok"], stream });
      expect(r.status).toBe(200);
      // The fast provider's 150 ms, not the gateway's default, and far below the test's deadline.
      expect(r.ms).toBeLessThan(2_000);
      const id = r.headers.get("x-gatehouse-generation-id")!;
      const cost = stream ? r.cost! : r.cost!;
      expect(cost).toBeCloseTo(OPENAI_OK_COST, 15);
      if (stream) expect(r.events.every((e) => e.model === "file/ok")).toBe(true);
      else expect(r.json.model).toBe("file/ok");
      // The timed-out attempt had the prompt: charged it, as a generation of its own.
      expect(await usage()).toBeCloseTo(before + cost + TIMED_OUT_COST, 12);
      const g = await generation(id);
      expect(g.model).toBe("file/ok");
      expect(g.provider_responses.map((p: { status: number | null }) => p.status)).toEqual([null, 200]);
      expect(finishesOf(id)).toEqual([`settle ${id}:0`, `settle ${id}:1`]);
      // The upstream saw the timed-out request go away (the gateway cancelled it).
      const hung = openai.requests.filter((q) => q.body?.model === "no-first-byte").at(-1)!;
      expect(await hung.closed).toEqual({ aborted: true });
    });
  }

  it("with no model left: 524 in the spec's envelope naming the deadline; the prompt charged, hold settled once", async () => {
    const before = await usage();
    for (const model of ["file/hang", "claude/hang"]) {
      for (const stream of [false, true]) {
        const r = await ask({ model, stream });
        expect(r.status).toBe(524);
        expect(r.ms).toBeLessThan(2_000);
        const e = r.json as { error: { code: number; message: string; metadata: any } };
        expect(e.error.code).toBe(524);
        expect(e.error.message).toMatch(/^Upstream timeout: upstream sent nothing within 150 ms/);
        expect(e.error.metadata).toMatchObject({ timeout_ms: 150, provider_status: null });
      }
    }
    // Each request reached its provider, which has the prompt: charged it (the same estimate for
    // both providers: no images), nothing more.
    expect(await usage()).toBeCloseTo(before + 4 * TIMED_OUT_COST, 12);
    // Four requests, one attempt each, each settled exactly once and never released.
    const last4 = finishes.slice(-4);
    expect(last4.every((f) => f.startsWith("settle ") && f.endsWith(":0"))).toBe(true);
    expect(new Set(last4).size).toBe(4);
  });

  it("a provider whose timeout_ms is longer than the gateway's default is waited for", async () => {
    // slow-headers answers after 400 ms: past GATEHOUSE_UPSTREAM_TIMEOUT_MS (200), within patient's 3000.
    for (const stream of [false, true]) {
      const r = await ask({ model: "file/slow", stream });
      expect(r.status).toBe(200);
      expect(r.ms).toBeGreaterThanOrEqual(390);
    }
  });
});

describe("a stream that stalls after its first chunk (idle_timeout_ms)", () => {
  it("ends with an in-band error chunk (finish_reason error), then [DONE]; the generated part is charged once", async () => {
    const before = await usage();
    const r = await ask({ models: ["file/stall", "file/ok"], stream: true });
    expect(r.status).toBe(200);
    expect(r.text.endsWith("data: [DONE]\n\n")).toBe(true);
    const ev = r.events;
    // No fallback after the first byte: every chunk is from the stalled model.
    expect(ev.every((e) => e.model === "file/stall")).toBe(true);
    expect(ev[0]!.choices[0].delta.content).toBe("Hello");
    const last = ev.at(-1)!;
    expect(last.choices[0].finish_reason).toBe("error");
    expect(last.error.code).toBe(524);
    expect(last.error.message).toMatch(/went silent for 300 ms/);
    // The SDK's error type for it (ApiErrorType), not provider_unavailable.
    expect(last.error.metadata.error_type).toBe("timeout");
    // What was generated ("Hello": counted, the upstream sent no usage) is charged.
    expect(last.usage.completion_tokens).toBe(1);
    const cost = last.usage.cost as number;
    expect(cost).toBeCloseTo(last.usage.prompt_tokens * PROMPT_PRICE + COMPLETION_PRICE, 15);
    expect(await usage()).toBeCloseTo(before + cost, 12);
    const id = last.id as string;
    const g = await generation(id);
    expect(g.finish_reason).toBe("error");
    expect(g.usage).toBeCloseTo(cost, 12);
    expect(finishesOf(id)).toEqual([`settle ${id}:0`]);
    // The stalled upstream request was closed by the gateway.
    const stalled = openai.requests.filter((q) => q.body?.model === "stall").at(-1)!;
    expect(await stalled.closed).toEqual({ aborted: true });
  });

  it("forwards the first chunk as it arrives, not with the rest of the stream", async () => {
    const t0 = performance.now();
    const r = await postChat(s, key, { max_tokens: 50, model: "file/stall", stream: true });
    const reader = r.body!.getReader();
    let text = "";
    while (!text.includes('"Hello"')) {
      const { value, done } = await reader.read();
      expect(done).toBe(false);
      text += new TextDecoder().decode(value);
    }
    // The upstream goes silent for 300 ms (idle_timeout_ms) after "Hello": the chunk did not wait.
    const firstMs = performance.now() - t0;
    while (!(await reader.read()).done);
    const endMs = performance.now() - t0;
    expect(endMs).toBeGreaterThanOrEqual(290);
    expect(firstMs).toBeLessThan(endMs - 200);
  });
});

/**
 * A stream of EARLY_USAGE_TEXT whose only usage came early (EARLY_USAGE): its last event, the key's
 * usage growth and its record charge the upstream's prompt count and the count of all the text,
 * and its hold was settled once.
 */
async function expectEarlyPromptAndCountedCompletion(
  last: Record<string, any>,
  usageBefore: number,
  finishReason: string,
): Promise<void> {
  const counted = countTextTokens(EARLY_USAGE_TEXT.join(""));
  expect(counted).toBeGreaterThan(EARLY_USAGE.completion_tokens);
  expect(last.usage.prompt_tokens).toBe(EARLY_USAGE.prompt_tokens);
  expect(last.usage.completion_tokens).toBe(counted);
  const cost = last.usage.cost as number;
  expect(cost).toBeCloseTo(EARLY_USAGE.prompt_tokens * PROMPT_PRICE + counted * COMPLETION_PRICE, 15);
  expect(await usage()).toBeCloseTo(usageBefore + cost, 12);
  const id = last.id as string;
  const g = await generation(id);
  expect(g.finish_reason).toBe(finishReason);
  expect(g.tokens_completion).toBe(counted);
  expect(g.usage).toBeCloseTo(cost, 12);
  expect(finishesOf(id)).toEqual([`settle ${id}:0`]);
}

describe("a stream cut short after a usage sent early", () => {
  it("is charged the larger of that usage's completion count and the count of what was generated", async () => {
    const before = await usage();
    const r = await ask({ model: "file/early-usage", stream: true });
    expect(r.status).toBe(200);
    expect(r.text.endsWith("data: [DONE]\n\n")).toBe(true);
    const ev = r.events;
    const generated = EARLY_USAGE_TEXT.join("");
    const content = ev.map((e) => String(e.choices[0]?.delta?.content ?? "")).join("");
    expect(content).toBe(generated);
    const last = ev.at(-1)!;
    expect(last.choices[0].finish_reason).toBe("error");
    expect(last.error.code).toBe(502);
    expect(last.error.metadata.error_type).toBe("provider_unavailable");
    // The usage on the first chunk counted that chunk alone (1 token) and no final usage came: the
    // upstream's prompt count stands; the completion is the count of all that was generated.
    await expectEarlyPromptAndCountedCompletion(last, before, "error");
  });
});

describe("a stream that ends well with its only usage sent early", () => {
  it("is charged the larger of that usage's completion count and the count of the text sent after it", async () => {
    const before = await usage();
    const r = await ask({ model: "file/early-usage-end", stream: true });
    expect(r.status).toBe(200);
    expect(r.text.endsWith("data: [DONE]\n\n")).toBe(true);
    const ev = r.events;
    const generated = EARLY_USAGE_TEXT.join("");
    expect(ev.map((e) => String(e.choices[0]?.delta?.content ?? "")).join("")).toBe(generated);
    expect(ev.some((e) => e.choices[0]?.finish_reason === "stop")).toBe(true);
    const last = ev.at(-1)!;
    expect(last.error).toBeUndefined();
    // The first chunk's usage (1 completion token) was sent before the rest of the text: charging
    // it as reported would bill one token for the whole answer.
    await expectEarlyPromptAndCountedCompletion(last, before, "stop");
  });

  it("with a final usage after all of its text: charged that usage as reported, not the count", async () => {
    const before = await usage();
    const r = await ask({ model: "file/final-usage", stream: true });
    expect(r.status).toBe(200);
    const last = r.events.at(-1)!;
    expect(countTextTokens(EARLY_USAGE_TEXT.join(""))).toBeGreaterThan(FINAL_USAGE.completion_tokens);
    expect(last.usage.prompt_tokens).toBe(FINAL_USAGE.prompt_tokens);
    expect(last.usage.completion_tokens).toBe(FINAL_USAGE.completion_tokens);
    const cost = last.usage.cost as number;
    expect(cost).toBeCloseTo(
      FINAL_USAGE.prompt_tokens * PROMPT_PRICE + FINAL_USAGE.completion_tokens * COMPLETION_PRICE,
      15,
    );
    expect(await usage()).toBeCloseTo(before + cost, 12);
    expect((await generation(last.id as string)).tokens_completion).toBe(FINAL_USAGE.completion_tokens);
  });
});

describe("429 with Retry-After from the upstream", () => {
  for (const stream of [false, true]) {
    it(`falls back to the next model, then to another provider (${stream ? "stream" : "full"}); the 429 attempt's hold is released once`, async () => {
      for (const [models, answered, cost] of [
        [["file/limited", "file/ok"], "file/ok", OPENAI_OK_COST],
        [["claude/limited", "file/limited", "claude/ok"], "claude/ok", ANTHROPIC_OK_COST],
      ] as const) {
        const before = await usage();
        const r = await ask({ models, stream });
        expect(r.status).toBe(200);
        const id = r.headers.get("x-gatehouse-generation-id")!;
        const got = stream ? r.cost! : r.cost!;
        expect(got).toBeCloseTo(cost, 15);
        expect(await usage()).toBeCloseTo(before + cost, 12);
        const g = await generation(id);
        expect(g.model).toBe(answered);
        const statuses = g.provider_responses.map((p: { status: number | null }) => p.status);
        expect(statuses).toEqual([...Array(models.length - 1).fill(429), 200]);
        expect(finishesOf(id)).toEqual([
          ...models.slice(0, -1).map((_, n) => `release ${id}:${n}`),
          `settle ${id}:${models.length - 1}`,
        ]);
      }
    });
  }

  it("with no fallback: 429 in the spec's envelope with the upstream's Retry-After; nothing charged", async () => {
    for (const [model, seconds] of [
      ["file/limited", 7],
      ["claude/limited", 3],
    ] as const) {
      for (const stream of [false, true]) {
        const before = await usage();
        const n = finishes.length;
        const r = await ask({ model, stream });
        expect(r.status).toBe(429);
        expect(r.headers.get("retry-after")).toBe(String(seconds));
        const e = r.json as { error: { code: number; message: string; metadata: any } };
        expect(e.error.code).toBe(429);
        expect(e.error.message).toMatch(/^Upstream rate limited: upstream answered 429/);
        expect(e.error.metadata).toMatchObject({ provider_status: 429, retry_after_seconds: seconds });
        expect(await usage()).toBe(before);
        expect(finishes.slice(n)).toHaveLength(1);
        expect(finishes[n]).toMatch(/^release gen-.+:0$/);
      }
    }
  });
});
