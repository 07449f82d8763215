import { createServer, type AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Broadcaster } from "../../src/broadcast/delivery/broadcaster.js";
import { defaultEncoderLookup } from "../../src/broadcast/encoder-lookup.js";
import { countPromptTokens } from "../../src/gateway/tokens/count-tokens.js";
import { systemClock } from "../../src/lib/clock.js";
import { hashKey } from "../../src/lib/ids.js";
import { createWebhook, testSettings } from "../broadcast/broadcast-helpers.js";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { FAKE_OPENAI_KEY, startFakeOpenAI } from "../helpers/fake-upstreams/openai.js";
import { leaveOnceSent } from "../helpers/leave-stream.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { postChat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * Abandoned requests are charged for what the provider received (issue 35; docs/gateway.md "What
 * abandoned requests cost": a request whose prompt reached a provider is charged at least the
 * prompt, whoever leaves first).
 * Through a listening server, local fake upstreams on 127.0.0.1 and a Broadcast receiver: once an
 * attempt's request was sent, a client that leaves before the first byte, or a first-byte timeout
 * (before a fallback or the error answer), settles the prompt's estimate as a cancelled
 * generation, recorded once, in the key's usage, the ledger, GET /generation and Broadcast. A
 * connection refused (nothing sent) costs nothing.
 */
const PROMPT_PRICE = 0.000001;
const COMPLETION_PRICE = 0.000002;
/** The fake OpenAI upstream's `ok` usage: 12 prompt, 5 completion tokens. */
const OK_COST = 12 * PROMPT_PRICE + 5 * COMPLETION_PRICE;
/** The built-in mock's prices (build-catalog.ts): $1 and $2 per million tokens. */
const MOCK_PROMPT_PRICE = 0.000001;

/** A prompt of about 240,000 characters of varied words: its estimate is tens of thousands of tokens. */
const BIG = Array.from({ length: 30_000 }, (_, i) => `w${(i * 7919) % 10_007}x`).join(" ");
const messages = (tag: string) => [{ role: "user", content: `${tag} ${BIG}` }];
/** The prompt's estimate, as the gateway's reservation counts it (no images: one rule for all). */
const estimate = (tag: string) => countPromptTokens(messages(tag));

let openai: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;
let broadcaster: Broadcaster;
let rx: TestReceiver;
let key: string;

/** A port on 127.0.0.1 where nothing listens: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  openai = await startFakeOpenAI();
  const refused = await closedPort();
  const provider = (slug: string, timeoutMs: number, baseUrl = `${openai.url}/v1`) => ({
    slug,
    kind: "openai-compatible",
    base_url: baseUrl,
    api_key_env: "LOCAL_KEY",
    timeout_ms: timeoutMs,
  });
  const model = (id: string, prov: string, upstream: string) => ({
    id,
    provider: prov,
    upstream_model: upstream,
    prompt_price: PROMPT_PRICE,
    completion_price: COMPLETION_PRICE,
  });
  file = writeProvidersFile(
    [
      // Waits long for a first byte: the client leaves first.
      provider("patient", 20_000),
      // Gives up after 300 ms without a first byte.
      provider("impatient", 300),
      provider("calm", 10_000),
      // Nothing listens there: the request is never sent.
      provider("refused", 10_000, `http://127.0.0.1:${refused}/v1`),
    ],
    [
      model("file/wait", "patient", "no-first-byte"),
      model("file/hang", "impatient", "no-first-byte"),
      model("file/ok", "calm", "ok"),
      model("file/refused", "refused", "ok"),
    ],
  );
  // Delivery to the loopback receiver is opted in explicitly (private addresses may be refused).
  const settings = testSettings({ refusePrivateAddresses: false });
  s = await startListening({
    clock: systemClock,
    env: {
      GATEHOUSE_PROVIDERS_FILE: file.path,
      LOCAL_KEY: FAKE_OPENAI_KEY,
      // The mock takes its request at once and answers after 10 s: a client leaves before.
      GATEHOUSE_MOCK_LATENCY_MS: "10000",
    },
    config: { broadcast: settings },
  });
  broadcaster = new Broadcaster({
    store: s.ctx.store,
    secretBox: s.ctx.secretBox,
    clock: systemClock,
    settings,
    encoderFor: defaultEncoderLookup,
    outboxSignal: s.ctx.outboxSignal,
  });
  s.ctx.broadcaster = broadcaster;
  rx = new TestReceiver();
  await rx.start();
  await createWebhook(s, rx.url);
  broadcaster.start();
  const created = await s.call({
    method: "POST",
    url: "/api/v1/keys",
    payload: { name: "leaver", limit: 100 },
  });
  expect(created.statusCode).toBe(201);
  key = created.json<{ key: string }>().key;
});

afterAll(async () => {
  await broadcaster?.stop();
  await s?.close();
  await rx?.stop();
  await openai?.close();
  file?.remove();
});

afterEach(async () => {
  // Every hold was settled or released, once its record committed.
  await s.app.gateway.recorder.settled();
  expect(await s.app.gateway.holds.store.openCount()).toBe(0);
  expect(s.app.gateway.holds.liveCount).toBe(0);
});

/** The key's usage in USD (GET /key). */
const usage = async (): Promise<number> =>
  (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>().data
    .usage;

/** The key's all-time row of the usage ledger, in nano-USD. */
async function ledgerNano(): Promise<bigint> {
  const row = await s.ctx.store.db
    .selectFrom("usage_counters")
    .select("usage_nano")
    .where("scope", "=", "key")
    .where("scope_id", "=", hashKey(key))
    .where("window", "=", "all")
    .executeTakeFirst();
  return BigInt(row?.usage_nano ?? 0);
}

/** Ids of every generation the gateway recorded so far. */
async function recordedIds(): Promise<Set<string>> {
  const rows = await s.ctx.store.db.selectFrom("gateway_generations").select("id").execute();
  return new Set(rows.map((r) => r.id));
}

/** The generations recorded since `before` was taken, once `n` of them are there. */
async function newGenerations(before: Set<string>, n: number): Promise<string[]> {
  let ids: string[] = [];
  await waitFor(
    async () => {
      ids = [...(await recordedIds())].filter((id) => !before.has(id));
      return ids.length >= n;
    },
    10_000,
    `${n} new generation(s) recorded`,
  );
  return ids;
}

async function generation(id: string): Promise<Record<string, any>> {
  const r = await s.call({ method: "GET", url: `/api/v1/generation?id=${id}`, auth: key });
  expect(r.statusCode).toBe(200);
  return r.json<{ data: Record<string, any> }>().data;
}

/** The generation reached the Broadcast receiver, exactly once; the delivered span's text. */
async function broadcastOnce(id: string): Promise<string> {
  await waitFor(() => rx.delivered.has(id), 10_000, `${id} delivered to Broadcast`);
  // Give a duplicate time to show up.
  await new Promise((r) => setTimeout(r, 200));
  expect(rx.delivered.get(id)).toBe(1);
  return rx.requests.find((q) => q.ids.includes(id))!.body;
}

/** Whether the fake upstream has a request whose prompt carries this tag. */
const upstreamGot = (tag: string) => () =>
  openai.requests.some((q) => JSON.stringify(q.body?.messages ?? "").includes(tag));

/** POST /chat/completions with the test key (max_tokens 50, then `body`); the unread response. */
const post = (body: Record<string, unknown>) => postChat(s, key, { max_tokens: 50, ...body });

describe("a client that leaves after its request reached the provider, before the first byte", () => {
  for (const stream of [true, false]) {
    it(`is charged the prompt's estimate once, recorded as cancelled, and reaches Broadcast (${stream ? "stream" : "whole answer"})`, async () => {
      const tag = `leave-${stream ? "stream" : "whole"}`;
      const before = await usage();
      const ledgerBefore = await ledgerNano();
      const ids = await recordedIds();
      // The whole answer's client leaving does not stop the upstream call (it is billed once
      // asked): the impatient provider gives up on it after 300 ms, then it is settled.
      await leaveOnceSent(
        s.baseUrl,
        key,
        { model: stream ? "file/wait" : "file/hang", messages: messages(tag), stream, max_tokens: 50 },
        upstreamGot(tag),
      );
      const [id, ...more] = await newGenerations(ids, 1);
      expect(more).toEqual([]);
      const tokens = estimate(tag);
      expect(tokens).toBeGreaterThan(20_000);
      const cost = tokens * PROMPT_PRICE;
      const g = await generation(id!);
      expect(g.cancelled).toBe(true);
      expect(g.streamed).toBe(stream);
      expect(g.finish_reason).toBe(stream ? "cancelled" : "timeout");
      expect(g.model).toBe(stream ? "file/wait" : "file/hang");
      expect(g.provider_name).toBe(stream ? "patient" : "impatient");
      expect(g.tokens_prompt).toBe(tokens);
      expect(g.tokens_completion).toBe(0);
      expect(g.usage).toBeCloseTo(cost, 12);
      expect(g.provider_responses.map((p: { status: number | null }) => p.status)).toEqual([null]);
      expect(await usage()).toBeCloseTo(before + cost, 9);
      expect((await ledgerNano()) - ledgerBefore).toBe(BigInt(tokens) * 1_000n);
      const delivered = await broadcastOnce(id!);
      expect(delivered).toContain(tag);
      // Charged once: nothing more lands later.
      await s.app.gateway.recorder.settled();
      expect(await usage()).toBeCloseTo(before + cost, 9);
      expect((await recordedIds()).size).toBe(ids.size + 1);
      // The gateway cancelled the upstream request.
      const upstream = openai.requests.find((q) => JSON.stringify(q.body?.messages).includes(tag))!;
      expect(await upstream.closed).toEqual({ aborted: true });
    });
  }

  it("through the built-in mock too: it has the request at once", async () => {
    const tag = "leave-mock";
    const before = await usage();
    const ids = await recordedIds();
    const t0 = Date.now();
    await leaveOnceSent(
      s.baseUrl,
      key,
      { model: "mock/echo", messages: messages(tag), stream: true, max_tokens: 50 },
      () => Date.now() - t0 > 300,
    );
    const [id] = await newGenerations(ids, 1);
    const g = await generation(id!);
    expect(g).toMatchObject({ cancelled: true, finish_reason: "cancelled", model: "mock/echo" });
    expect(g.tokens_prompt).toBe(estimate(tag));
    expect(await usage()).toBeCloseTo(before + estimate(tag) * MOCK_PROMPT_PRICE, 9);
    await broadcastOnce(id!);
  });
});

describe("a first-byte timeout after the request was sent", () => {
  for (const stream of [true, false]) {
    it(`before a fallback: its own cancelled generation, charged the prompt; the fallback served and charged as usual (${stream ? "stream" : "whole answer"})`, async () => {
      const tag = `timeout-${stream ? "stream" : "whole"}`;
      const before = await usage();
      const ledgerBefore = await ledgerNano();
      const ids = await recordedIds();
      const r = await post({ models: ["file/hang", "file/ok"], messages: messages(tag), stream });
      expect(r.status).toBe(200);
      const text = await r.text();
      const servedId = r.headers.get("x-gatehouse-generation-id")!;
      const created = await newGenerations(ids, 2);
      expect(created).toHaveLength(2);
      expect(created).toContain(servedId);
      const timedOutId = created.find((id) => id !== servedId)!;
      expect(timedOutId).toMatch(/^gen-/);

      const tokens = estimate(tag);
      const promptCost = tokens * PROMPT_PRICE;
      const timedOut = await generation(timedOutId);
      expect(timedOut).toMatchObject({
        cancelled: true,
        finish_reason: "timeout",
        model: "file/hang",
        provider_name: "impatient",
        streamed: stream,
        tokens_prompt: tokens,
        tokens_completion: 0,
      });
      expect(timedOut.usage).toBeCloseTo(promptCost, 12);
      expect(timedOut.provider_responses.map((p: { status: number | null }) => p.status)).toEqual([null]);

      // The served generation keeps the request's id and its own cost (the fake's usage).
      const served = await generation(servedId);
      expect(served).toMatchObject({ cancelled: false, model: "file/ok", provider_name: "calm" });
      expect(served.usage).toBeCloseTo(OK_COST, 12);
      expect(served.provider_responses.map((p: { status: number | null }) => p.status)).toEqual([null, 200]);
      if (!stream)
        expect((JSON.parse(text) as { usage: { cost: number } }).usage.cost).toBeCloseTo(OK_COST, 12);

      expect(await usage()).toBeCloseTo(before + promptCost + OK_COST, 9);
      expect((await ledgerNano()) - ledgerBefore).toBe(BigInt(tokens) * 1_000n + 22_000n);
      await broadcastOnce(timedOutId);
      await broadcastOnce(servedId);
    });
  }

  it("with no fallback: the 524 answer, and the prompt charged as a timed-out generation", async () => {
    const tag = "timeout-alone";
    const before = await usage();
    const ids = await recordedIds();
    const r = await post({ model: "file/hang", messages: messages(tag), stream: true });
    expect(r.status).toBe(524);
    const [id, ...more] = await newGenerations(ids, 1);
    expect(more).toEqual([]);
    const g = await generation(id!);
    expect(g).toMatchObject({ cancelled: true, finish_reason: "timeout", tokens_prompt: estimate(tag) });
    expect(await usage()).toBeCloseTo(before + estimate(tag) * PROMPT_PRICE, 9);
  });
});

describe("a connection refused: nothing was sent", () => {
  for (const stream of [true, false]) {
    it(`costs nothing and records nothing; a fallback is served as usual (${stream ? "stream" : "whole answer"})`, async () => {
      const before = await usage();
      const ledgerBefore = await ledgerNano();
      const ids = await recordedIds();
      const alone = await post({ model: "file/refused", messages: messages("refused"), stream });
      expect(alone.status).toBe(502);
      await alone.text();
      await s.app.gateway.recorder.settled();
      expect(await usage()).toBe(before);
      expect(await ledgerNano()).toBe(ledgerBefore);
      expect((await recordedIds()).size).toBe(ids.size);

      const r = await post({ models: ["file/refused", "file/ok"], messages: messages("refused"), stream });
      expect(r.status).toBe(200);
      await r.text();
      const created = await newGenerations(ids, 1);
      expect(created).toEqual([r.headers.get("x-gatehouse-generation-id")]);
      expect(await usage()).toBeCloseTo(before + OK_COST, 9);
      expect((await ledgerNano()) - ledgerBefore).toBe(22_000n);
    });
  }
});
