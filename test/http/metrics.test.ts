import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { Broadcaster } from "../../src/broadcast/delivery/broadcaster.js";
import { defaultEncoderLookup } from "../../src/broadcast/encoder-lookup.js";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { systemClock } from "../../src/lib/clock.js";
import { collectDefaultMetrics, Registry } from "prom-client";
import { GatehouseMetrics } from "../../src/metrics/gatehouse-metrics.js";
import { collectProcessMetrics } from "../../src/metrics/process-metrics.js";
import {
  createWebhook,
  ingestRecords,
  makeBroadcastApp,
  records,
  testSettings,
} from "../broadcast/broadcast-helpers.js";
import { waitFor } from "../helpers/broadcast-receiver.js";
import { leaveStreamAfter } from "../helpers/leave-stream.js";
import { makeTestApp } from "../helpers/app.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { FAKE_OPENAI_KEY, startFakeOpenAI } from "../helpers/fake-upstreams/openai.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * GET /metrics (Prometheus): only with GATEHOUSE_METRICS_TOKEN, only to that bearer token, and
 * what it counts: HTTP requests by route pattern and status, the data plane's attempts,
 * generations, tokens and cost by provider and model, and Broadcast's sends and settlements.
 * A real listening server, a local fake OpenAI upstream, real SQLite and DuckDB.
 */
const TOKEN = "metrics-token-0123456789";
const PROMPT_PRICE = 0.000001;
const COMPLETION_PRICE = 0.000002;

/** The value of one sample of the exposition; labels must match exactly (order-free). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) got[k!] = v!;
    const want = Object.entries(labels);
    if (Object.keys(got).length === want.length && want.every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

const scrape = async (origin: string, auth: string | null = `Bearer ${TOKEN}`) =>
  fetch(`${origin}/metrics`, {
    headers: auth === null ? {} : { authorization: auth },
    signal: AbortSignal.timeout(10_000),
  });

describe("GET /metrics with GATEHOUSE_METRICS_TOKEN", () => {
  let openai: FakeServer;
  let file: WrittenProvidersFile;
  let s: ListeningApp;
  let origin: string;
  let key: string;

  beforeAll(async () => {
    openai = await startFakeOpenAI();
    const model = (id: string, upstream: string) => ({
      id,
      provider: "local",
      upstream_model: upstream,
      prompt_price: PROMPT_PRICE,
      completion_price: COMPLETION_PRICE,
    });
    file = writeProvidersFile(
      [{ slug: "local", kind: "openai-compatible", base_url: `${openai.url}/v1`, api_key_env: "LOCAL_KEY" }],
      [
        model("local/ok", "ok"),
        model("local/limited", "rate-limited"),
        model("local/reset", "reset"),
        model("local/never-ends", "never-ends"),
      ],
    );
    s = await startListening({
      clock: systemClock,
      env: {
        GATEHOUSE_PROVIDERS_FILE: file.path,
        LOCAL_KEY: FAKE_OPENAI_KEY,
        GATEHOUSE_METRICS_TOKEN: TOKEN,
      },
    });
    origin = new URL(s.baseUrl).origin;
    key = (
      await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "metrics", limit: 10 } })
    ).json<{
      key: string;
    }>().key;
  });

  afterAll(async () => {
    await s?.close();
    await openai?.close();
    file?.remove();
  });

  /** POST /chat/completions ("Hi", max_tokens 50, then `body`) with `bearer`. */
  const ask = (body: Record<string, unknown>, bearer = key) => chat(s, bearer, { max_tokens: 50, ...body });

  it("refuses a scrape without the token, or with another, with the error envelope", async () => {
    for (const auth of [null, "Bearer wrong-token-0123456789", `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const r = await scrape(origin, auth);
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      const body = (await r.json()) as { error: { code: number; message: string } };
      expect(body.error.code).toBe(401);
      expect(body.error.message).toContain("GATEHOUSE_METRICS_TOKEN");
      expect(JSON.stringify(body)).not.toContain(TOKEN);
    }
  });

  it("serves the text exposition with Node's process metrics", async () => {
    const r = await scrape(origin);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await r.text();
    expect(text).toContain("# TYPE gatehouse_http_requests_total counter");
    expect(text).toContain("# TYPE gatehouse_gateway_time_to_first_token_seconds histogram");
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0);
    expect(text).not.toContain("nodejs_gc_duration_seconds");
    expect(sample(text, "gatehouse_gateway_requests_in_flight")).toBe(0);
    expect(sample(text, "gatehouse_recording_queued")).toBeGreaterThanOrEqual(0);
  });

  it("counts a fallback's attempts, the generation, its tokens and cost, and the HTTP answers", async () => {
    const before = await (await scrape(origin)).text();
    const ok = await ask({ models: ["local/limited", "local/ok"] });
    expect(ok.status).toBe(200);
    const answer = JSON.parse(ok.text) as {
      usage: { prompt_tokens: number; completion_tokens: number; cost: number };
    };
    // Streamed and cut short after output: served, with the error outcome.
    const cut = await ask({ model: "local/reset", stream: true });
    expect(cut.status).toBe(200);
    expect(cut.text).toContain('"finish_reason":"error"');
    // Refused before anything is forwarded: only the HTTP answer counts.
    expect((await ask({ model: "local/ok" }, "sk-gh-v1-not-a-key")).status).toBe(401);
    await s.app.gateway.recorder.settled();
    const text = await (await scrape(origin)).text();
    const grew = (name: string, labels: Record<string, string>) =>
      (sample(text, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);

    const attempt = (model: string, status: string) =>
      grew("gatehouse_gateway_upstream_attempts_total", { provider: "local", model, status });
    expect(attempt("local/limited", "429")).toBe(1);
    expect(attempt("local/ok", "200")).toBe(1);
    expect(attempt("local/reset", "200")).toBe(1);

    const outcome = (model: string, o: string) =>
      grew("gatehouse_gateway_generations_total", { provider: "local", model, outcome: o });
    expect(outcome("local/ok", "completed")).toBe(1);
    expect(outcome("local/ok", "error")).toBe(0);
    expect(outcome("local/reset", "error")).toBe(1);
    expect(outcome("local/limited", "completed")).toBe(0);

    const tokens = (type: string) =>
      grew("gatehouse_gateway_tokens_total", { provider: "local", model: "local/ok", type });
    expect(tokens("prompt")).toBe(answer.usage.prompt_tokens);
    expect(tokens("completion")).toBe(answer.usage.completion_tokens);
    expect(
      grew("gatehouse_gateway_cost_usd_total", {
        provider: "local",
        model: "local/ok",
        billed_to: "credits",
      }),
    ).toBeCloseTo(answer.usage.cost, 12);
    expect(
      grew("gatehouse_gateway_cost_usd_total", { provider: "local", model: "local/ok", billed_to: "byok" }),
    ).toBe(0);

    const route = "/api/v1/chat/completions";
    expect(grew("gatehouse_http_requests_total", { method: "POST", route, status_code: "200" })).toBe(2);
    expect(grew("gatehouse_http_requests_total", { method: "POST", route, status_code: "401" })).toBe(1);
    expect(grew("gatehouse_http_request_duration_seconds_count", { method: "POST", route })).toBe(3);
    expect(
      grew("gatehouse_gateway_time_to_first_token_seconds_count", { provider: "local", streamed: "false" }),
    ).toBe(1);
    expect(
      grew("gatehouse_gateway_time_to_first_token_seconds_count", { provider: "local", streamed: "true" }),
    ).toBe(1);
    expect(grew("gatehouse_gateway_overhead_seconds_count", {})).toBe(2);
  });

  it("counts a stream whose client left as cancelled", async () => {
    const labels = { provider: "local", model: "local/never-ends", outcome: "cancelled" };
    const cancelled = async () =>
      sample(await (await scrape(origin)).text(), "gatehouse_gateway_generations_total", labels) ?? 0;
    const before = await cancelled();
    const body = {
      model: "local/never-ends",
      stream: true,
      max_tokens: 50,
      messages: [{ role: "user", content: "Hi" }],
    };
    await leaveStreamAfter(s.baseUrl, key, body, 1);
    await waitFor(async () => (await cancelled()) === before + 1, 5_000, "the cancelled generation counted");
  });

  it("counts a record that failed after its answer was sent", async () => {
    expect(s.app.gateway.answersBeforeCommit).toBe(true);
    const before = await (await scrape(origin)).text();
    const transaction = s.ctx.store.transaction.bind(s.ctx.store);
    s.ctx.store.transaction = async () => {
      throw new Error("record store down");
    };
    onTestFinished(() => {
      s.ctx.store.transaction = transaction;
    });
    expect((await ask({ model: "local/ok" })).status).toBe(200); // answered: the failure follows
    await s.app.gateway.recorder.settled();
    await new Promise((done) => setImmediate(done)); // the settle's rejection handler runs
    s.ctx.store.transaction = transaction;
    const text = await (await scrape(origin)).text();
    const failures = (t: string) => sample(t, "gatehouse_recording_failures_total") ?? 0;
    expect(failures(text) - failures(before)).toBe(1);
  });

  it("labels requests by route pattern, never by the path a client sent", async () => {
    const before = await (await scrape(origin)).text();
    for (const path of ["/no/such/path-1", "/no/such/path-2"]) {
      const r = await fetch(`${origin}${path}`, { method: "POST", signal: AbortSignal.timeout(10_000) });
      expect(r.status).toBe(404);
    }
    const r = await fetch(`${s.baseUrl}/keys/not-a-hash`, {
      headers: { authorization: `Bearer ${s.key}` },
      signal: AbortSignal.timeout(10_000),
    });
    expect(r.status).toBe(404);
    const text = await (await scrape(origin)).text();
    const grew = (labels: Record<string, string>) =>
      (sample(text, "gatehouse_http_requests_total", labels) ?? 0) -
      (sample(before, "gatehouse_http_requests_total", labels) ?? 0);
    expect(grew({ method: "POST", route: "unmatched", status_code: "404" })).toBe(2);
    expect(grew({ method: "GET", route: "/api/v1/keys/:hash", status_code: "404" })).toBe(1);
    expect(text).not.toContain("path-1");
    expect(text).not.toContain("not-a-hash");
  });
});

describe("process metrics", () => {
  it("are prom-client's defaults under their names, less the garbage-collection histogram", async () => {
    const names = async (r: Registry) => (await r.getMetricsAsJSON()).map((m) => m.name).sort();
    const defaults = new Registry();
    collectDefaultMetrics({ register: defaults });
    const ours = new Registry();
    expect(collectProcessMetrics(ours)).not.toContain("gc");
    const expected = (await names(defaults)).filter((n) => n !== "nodejs_gc_duration_seconds");
    expect(expected.length).toBeGreaterThan(10);
    expect(await names(ours)).toEqual(expected);
  });
});

describe("GET /metrics without GATEHOUSE_METRICS_TOKEN", () => {
  it("is a 404 saying how to turn metrics on, not the dashboard's page", async () => {
    const t = await makeTestApp();
    try {
      for (const auth of [null, `Bearer ${TOKEN}`]) {
        const r = await t.call({ method: "GET", url: "/metrics", auth });
        expect(r.statusCode).toBe(404);
        expect(r.headers["content-type"]).toMatch(/^application\/json/);
        expect(r.json()).toMatchObject({
          error: { code: 404, message: expect.stringContaining("GATEHOUSE_METRICS_TOKEN") },
        });
      }
      expect(t.app.gateway.observer).toBeNull();
    } finally {
      await t.close();
    }
  });
});

describe("GATEHOUSE_METRICS_TOKEN", () => {
  it("must be at least 16 printable characters, and is never printed", () => {
    for (const bad of ["short", "has a space in it ok", "tab\tinside-0123456789"]) {
      try {
        loadConfig({ GATEHOUSE_METRICS_TOKEN: bad });
        expect.unreachable(`accepted ${JSON.stringify(bad)}`);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        expect(String(err)).toContain("GATEHOUSE_METRICS_TOKEN: must be at least 16 printable characters");
        expect(String(err)).not.toContain(bad);
      }
    }
    const config = loadConfig({ GATEHOUSE_METRICS_TOKEN: TOKEN });
    expect(config.metricsToken?.reveal()).toBe(TOKEN);
    expect(JSON.stringify(config)).not.toContain(TOKEN);
  });
});

describe("Broadcast's sends and settlements", () => {
  let receiver: Server;
  let url: string;

  beforeAll(async () => {
    // /ok accepts every body; /refuse refuses every body (400: dead-lettered, not retried).
    receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(req.url === "/ok" ? 200 : 400).end(req.url === "/ok" ? "{}" : "no"));
    });
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((done) => receiver.close(() => done()));
  });

  it("counts requests by status and generations by outcome, per destination type", async () => {
    const metrics = new GatehouseMetrics();
    // Not the tests' 300 ms send timeout: on a loaded machine one send can take longer, and a
    // timed-out send is retried, which this test counts as a failure.
    const t = await makeBroadcastApp({ attemptTimeoutMs: 10_000 }, metrics);
    const broadcaster = t.broadcaster;
    try {
      await createWebhook(t, `${url}/ok`);
      await createWebhook(t, `${url}/refuse`);
      await ingestRecords(t, records(t, 3));
      broadcaster.start();
      const count = async (name: string, labels: Record<string, string>) =>
        sample((await metrics.scrape()).body, name, labels) ?? 0;
      const settled = (outcome: string) =>
        count("gatehouse_broadcast_generations_total", { destination_type: "webhook", outcome });
      await waitFor(
        async () => (await settled("delivered")) === 3 && (await settled("dead")) === 3,
        10_000,
        "both destinations settled",
      );
      // Each receiver answers at once, so nothing is retried; when something was, say why.
      const errors = await t.ctx.store.db
        .selectFrom("broadcast_destination_stats")
        .select(["destination_id", "last_error"])
        .execute();
      expect(await settled("retrying"), JSON.stringify(errors)).toBe(0);
      expect(
        await count("gatehouse_broadcast_requests_total", { destination_type: "webhook", status: "200" }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        await count("gatehouse_broadcast_requests_total", { destination_type: "webhook", status: "400" }),
      ).toBeGreaterThanOrEqual(1);
    } finally {
      await t.close(); // stops the broadcaster too
    }
  });
});

describe("Broadcast's backlog (read from the record store at each scrape)", () => {
  let receiver: Server;
  let url: string;
  let refused = 0;

  beforeAll(async () => {
    // /ok… accepts every body; anything else answers 503 (retried: its deliveries stay pending).
    receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const ok = req.url?.startsWith("/ok") === true;
        if (!ok) refused++;
        res.writeHead(ok ? 200 : 503).end(ok ? "{}" : "down");
      });
    });
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((done) => receiver.close(() => done()));
  });

  const backlog = (text: string, gauge: "pending_generations" | "oldest_pending_age_seconds", type: string) =>
    sample(text, `gatehouse_broadcast_${gauge}`, { destination_type: type });

  it("shows a down destination's pending generations and their age, and 0 for a destination delivered to", async () => {
    // Retried for long enough that the down destination's deliveries stay pending.
    const settings = testSettings({ maxAttempts: 1_000, retryMaxMs: 200 });
    const s = await startListening({
      clock: systemClock,
      env: { GATEHOUSE_METRICS_TOKEN: TOKEN },
      config: { broadcast: settings },
    });
    const broadcaster = new Broadcaster({
      store: s.ctx.store,
      secretBox: s.ctx.secretBox,
      clock: systemClock,
      settings,
      encoderFor: defaultEncoderLookup,
      outboxSignal: s.ctx.outboxSignal,
    });
    try {
      const origin = new URL(s.baseUrl).origin;
      await createWebhook(s, `${url}/down`);
      const posthog = await s.call({
        method: "POST",
        url: "/api/v1/observability/destinations",
        payload: { type: "posthog", name: "ph", config: { apiKey: "phc_metrics", endpoint: `${url}/ok` } },
      });
      expect(posthog.statusCode).toBe(201);
      const empty = await (await scrape(origin)).text();
      expect(backlog(empty, "pending_generations", "webhook")).toBe(0);
      expect(backlog(empty, "oldest_pending_age_seconds", "webhook")).toBe(0);

      expect(sample(empty, "gatehouse_broadcast_outbox_batches")).toBe(0);
      expect(sample(empty, "gatehouse_broadcast_outbox_oldest_age_seconds")).toBe(0);

      // Accepted, not fanned out yet (the worker has not started): in the outbox, in no
      // destination's pending count.
      await ingestRecords(s, records(s, 3));
      await new Promise((r) => setTimeout(r, 20));
      const waiting = await (await scrape(origin)).text();
      expect(sample(waiting, "gatehouse_broadcast_outbox_batches")).toBe(1);
      const waited = sample(waiting, "gatehouse_broadcast_outbox_oldest_age_seconds")!;
      expect(waited).toBeGreaterThan(0);
      expect(waited).toBeLessThan(60);
      expect(backlog(waiting, "pending_generations", "webhook")).toBe(0);

      // Counted once the worker's fan-out has made the deliveries (its first pass).
      broadcaster.start();
      await waitFor(
        async () =>
          refused >= 2 &&
          backlog(await (await scrape(origin)).text(), "pending_generations", "posthog") === 0,
        10_000,
        "the posthog destination delivered to and the webhook refused twice",
      );
      const r = await scrape(origin);
      expect(r.status).toBe(200);
      const text = await r.text();
      expect(text).toContain("# TYPE gatehouse_broadcast_pending_generations gauge");
      expect(backlog(text, "pending_generations", "webhook")).toBe(3);
      const age = backlog(text, "oldest_pending_age_seconds", "webhook")!;
      expect(age).toBeGreaterThan(0);
      expect(age).toBeLessThan(60);
      expect(backlog(text, "pending_generations", "posthog")).toBe(0);
      expect(backlog(text, "oldest_pending_age_seconds", "posthog")).toBe(0);
      // Fanned out: the outbox is empty again (the batch stays stored for the pending webhook).
      expect(sample(text, "gatehouse_broadcast_outbox_batches")).toBe(0);
      expect(sample(text, "gatehouse_broadcast_outbox_oldest_age_seconds")).toBe(0);
      // Types only: no organization or destination in a label.
      expect(text).not.toContain(s.organizationId);
      expect(text).not.toMatch(/gatehouse_broadcast_pending_generations\{[^}]*(organization|destination_id)/);
    } finally {
      await broadcaster.stop();
      await s.close();
    }
  });

  it("leaves the backlog out of a scrape whose store read fails, and serves the rest", async () => {
    const lines: string[] = [];
    const s = await startListening({
      clock: systemClock,
      env: { GATEHOUSE_METRICS_TOKEN: TOKEN },
      logger: { level: "warn", stream: { write: (l: string) => void lines.push(l) } },
    });
    try {
      const origin = new URL(s.baseUrl).origin;
      await createWebhook(s, `${url}/down`);
      expect(backlog(await (await scrape(origin)).text(), "pending_generations", "webhook")).toBe(0);
      // The store throws in the backlog's statement (SQLite: no such table).
      await sql`ALTER TABLE broadcast_deliveries RENAME TO broadcast_deliveries_away`.execute(s.ctx.store.db);
      try {
        const r = await scrape(origin);
        expect(r.status).toBe(200);
        const text = await r.text();
        expect(text).toContain("# TYPE gatehouse_broadcast_pending_generations gauge");
        expect(text).not.toMatch(/^gatehouse_broadcast_(pending_generations|oldest_pending_age_seconds)\{/m);
        expect(text).not.toMatch(/^gatehouse_broadcast_outbox_\w+ /m);
        expect(sample(text, "gatehouse_gateway_requests_in_flight")).toBe(0);
        expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
        const warned = lines.filter((l) => l.includes("metrics: store read failed"));
        expect(warned).toHaveLength(1); // once per read, not per gauge
        expect(warned[0]).toContain('"source":"broadcast_backlog"');
        expect(warned[0]).toContain("no such table");
      } finally {
        await sql`ALTER TABLE broadcast_deliveries_away RENAME TO broadcast_deliveries`.execute(
          s.ctx.store.db,
        );
      }
      // Back as soon as the store answers again.
      expect(backlog(await (await scrape(origin)).text(), "pending_generations", "webhook")).toBe(0);
    } finally {
      await s.close();
    }
  });

  it("does not wait for a store that does not answer longer than its bound", async () => {
    const metrics = new GatehouseMetrics({ storeReadTimeoutMs: 200 });
    const failures: unknown[] = [];
    let reads = 0;
    metrics.watch({
      inFlight: () => 0,
      recordingQueued: () => 0,
      broadcastBacklog: () => {
        reads++;
        return new Promise(() => {}); // a stalled store
      },
      readFailed: (_source, err) => failures.push(err),
    });
    const started = Date.now();
    const [a, b] = await Promise.all([metrics.scrape(), metrics.scrape()]);
    expect(Date.now() - started).toBeLessThan(2_000);
    for (const { body } of [a, b]) {
      expect(body).toContain("# TYPE gatehouse_broadcast_oldest_pending_age_seconds gauge");
      expect(body).not.toMatch(/^gatehouse_broadcast_(pending_generations|oldest_pending_age_seconds)\{/m);
      expect(body).not.toMatch(/^gatehouse_broadcast_outbox_\w+ /m);
      expect(sample(body, "gatehouse_recording_queued")).toBe(0);
    }
    // A third scrape waits on the same stalled read instead of sending the store another.
    await metrics.scrape();
    expect(reads).toBe(1);
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toContain("no answer within 200 ms");
  });
});
