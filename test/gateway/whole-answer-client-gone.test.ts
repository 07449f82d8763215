import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { FAKE_OPENAI_KEY, startFakeOpenAI } from "../helpers/fake-upstreams/openai.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * A non-streamed request whose client leaves while the upstream generates: the upstream is not
 * cancelled (a provider bills a whole answer once asked; nothing else would tell what it cost),
 * and the answer is recorded as cancelled, charged once, its hold settled. A stream's client that
 * leaves cancels the upstream instead (test/gateway/stream-faults.test.ts).
 */
let openai: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;
let key: string;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  file = writeProvidersFile(
    [
      {
        slug: "calm",
        kind: "openai-compatible",
        base_url: `${openai.url}/v1`,
        api_key_env: "LOCAL_KEY",
        timeout_ms: 5_000,
      },
    ],
    [
      {
        id: "file/slow",
        provider: "calm",
        upstream_model: "slow-headers",
        prompt_price: 0.000001,
        completion_price: 0.000002,
      },
      {
        id: "file/hang",
        provider: "calm",
        upstream_model: "no-first-byte",
        prompt_price: 0.000001,
        completion_price: 0.000002,
      },
    ],
  );
  s = await startListening({
    clock: systemClock,
    env: { GATEHOUSE_PROVIDERS_FILE: file.path, LOCAL_KEY: FAKE_OPENAI_KEY },
  });
  key = (await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "gone", limit: 1 } })).json<{
    key: string;
  }>().key;
});

afterAll(async () => {
  await s?.close();
  await openai?.close();
  file?.remove();
});

const usage = async (): Promise<number> =>
  (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>().data
    .usage;

describe("a whole answer whose client leaves", () => {
  it("is generated, recorded as cancelled and charged once; the upstream is not cancelled", async () => {
    const before = await usage();
    const seen = openai.requests.length;
    const { port } = new URL(s.baseUrl);
    // The fake answers slow-headers after 400 ms: leave after the request reached it.
    await new Promise<void>((resolve) => {
      const req = request({
        host: "127.0.0.1",
        port,
        path: "/api/v1/chat/completions",
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      });
      req.on("error", () => resolve());
      req.on("close", () => resolve());
      req.end(JSON.stringify({ model: "file/slow", messages: [{ role: "user", content: "hi" }] }));
      const leave = setInterval(() => {
        if (openai.requests.length > seen) {
          clearInterval(leave);
          req.destroy();
        }
      }, 5);
    });
    const upstream = openai.requests[seen]!;
    expect(await upstream.closed).toEqual({ aborted: false });
    // The record commits after the answer: wait for it.
    let rec:
      { cancelled: boolean; streamed: boolean; tokens_completion: number; usage_nano: string } | undefined;
    for (let i = 0; i < 100 && !rec; i++) {
      const rows = await s.ctx.store.db.selectFrom("gateway_generations").select("detail").execute();
      rec = rows
        .map((r) => JSON.parse(r.detail) as typeof rec & { model: string })
        .find((d) => d.model === "file/slow");
      if (!rec) await new Promise((r) => setTimeout(r, 50));
    }
    expect(rec).toBeDefined();
    expect(rec!.cancelled).toBe(true);
    expect(rec!.streamed).toBe(false);
    // The fake's whole answer: 5 completion tokens in its usage.
    expect(rec!.tokens_completion).toBe(5);
    const cost = Number(BigInt(rec!.usage_nano)) / 1e9;
    expect(cost).toBeGreaterThan(0);
    expect(await usage()).toBeCloseTo(before + cost, 12);
    expect(await s.app.gateway.holds.store.openCount()).toBe(0);
    expect(s.app.gateway.holds.liveCount).toBe(0);
  });

  it("is cancelled by a shutdown whose grace runs out: the upstream call ends, the hold is released", async () => {
    const seen = openai.requests.length;
    const answer = fetch(`${s.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "file/hang", messages: [{ role: "user", content: "hi" }] }),
    });
    while (openai.requests.length === seen) await new Promise((r) => setTimeout(r, 5));
    const t0 = performance.now();
    expect(await s.app.gateway.inFlight.drain(100)).toEqual({ cancelled: 1 });
    // Well before the provider's 5 s first-byte deadline.
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect((await answer).status).toBeGreaterThanOrEqual(500);
    expect(await openai.requests[seen]!.closed).toEqual({ aborted: true });
    // The provider had the prompt: the attempt is charged it and recorded (docs/gateway.md "What
    // abandoned requests cost"), and its hold settles with that record, once it is committed.
    await s.app.gateway.recorder.settled();
    expect(await s.app.gateway.holds.store.openCount()).toBe(0);
  });
});
