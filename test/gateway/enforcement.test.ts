import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { systemClock } from "../../src/lib/clock.js";
import { loadConfig } from "../../src/config/config.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { STORE_FACTORIES, type StoreFactory } from "../helpers/stores.js";

/**
 * Reserve-then-settle under load: 200 concurrent requests against a limit that fits about 50
 * worst cases. Whatever the interleaving, settled spend never exceeds the limit, every hold is
 * finished, and each request either succeeded (charged exactly its answer's cost) or was refused
 * with 402/403 before anything was forwarded.
 */
/** A prompt whose echo is longer than MAX_TOKENS: every answer uses its whole hold's completion. */
const WORDS = Array.from({ length: 150 }, (_, i) => `w${i}`).join(" ");
const MSG = [{ role: "user", content: `${WORDS} [[mock chunk_delay_ms=5]]` }];
const MAX_TOKENS = 100;
/** mock/echo prices: 1 USD per million prompt tokens, 2 per million completion tokens. */
const worstOf = (promptTokens: number) => (promptTokens * 1 + MAX_TOKENS * 2) / 1e6;

function costOf(res: { status: number; text: string }, stream: boolean): number {
  if (res.status !== 200) return 0;
  if (!stream) return (JSON.parse(res.text) as { usage: { cost: number } }).usage.cost;
  const usage = res.text
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)) as { usage?: { cost: number } })
    .find((c) => c.usage);
  return usage?.usage?.cost ?? 0;
}

// Both recording modes (docs/gateway.md "Recording"): deferred answers before the record commits,
// and the hold must keep counting until it does. Both ledger reads of a reservation: SQLite in
// memory reads through the main connection (awaited), SQLite in a file from the process's copy of
// the committed totals (synchronous: src/domain/usage/committed-usage.ts).
const configs = [
  { recording: "durable", file: false },
  { recording: "durable", file: true },
  { recording: "deferred", file: true },
] as const;
for (const { recording, file } of configs)
  describe(`gateway enforcement: 200 concurrent requests (${recording} recording, SQLite ${file ? "file" : "in memory"})`, () => {
    let s: ListeningApp;
    let dir: string | null = null;
    beforeAll(async () => {
      dir = file ? mkdtempSync(join(tmpdir(), "gatehouse-enforcement-")) : null;
      s = await startListening({
        ...(dir ? { store: await openSqliteStore(join(dir, "gatehouse.db")) } : {}),
        clock: systemClock,
        env: {
          GATEHOUSE_MOCK_LATENCY_MS: "5",
          RATE_LIMIT_MANAGEMENT_MAX: "100000",
          GATEHOUSE_RECORDING: recording,
        },
      });
    });
    afterAll(async () => {
      await s.close();
      if (file) await s.ctx.store.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    let promptTokens = 0;
    beforeAll(async () => {
      const { key } = await createKey({ name: "probe" });
      const r = await chat(s, key, { model: "mock/echo", messages: MSG, max_tokens: MAX_TOKENS });
      const u = (JSON.parse(r.text) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
      expect(u.completion_tokens).toBe(MAX_TOKENS);
      promptTokens = u.prompt_tokens;
    });

    const createKey = async (body: Record<string, unknown>) => {
      const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: body });
      expect(r.statusCode).toBe(201);
      return r.json<{ key: string; data: { hash: string } }>();
    };
    const usageOf = async (key: string) =>
      (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>()
        .data.usage;

    for (const stream of [false, true]) {
      it(`key limit (${stream ? "streaming" : "not streaming"}): settled spend <= limit, usage = sum of answered costs`, async () => {
        const limit = Number((worstOf(promptTokens) * 50).toFixed(6));
        const { key } = await createKey({ name: `limited-${stream}`, limit });
        const results = await Promise.all(
          Array.from({ length: 200 }, () =>
            chat(s, key, { model: "mock/echo", messages: MSG, max_tokens: MAX_TOKENS, stream }),
          ),
        );
        const ok = results.filter((r) => r.status === 200);
        const refused = results.filter((r) => r.status === 402 || r.status === 403);
        expect(ok.length + refused.length).toBe(200);
        expect(ok.length).toBeGreaterThan(10);
        expect(refused.length).toBeGreaterThan(0);
        const answered = results.reduce((sum, r) => sum + costOf(r, stream), 0);
        const usage = await usageOf(key);
        expect(usage).toBeLessThanOrEqual(limit);
        expect(usage).toBeCloseTo(answered, 9);
        expect(await s.app.gateway.holds.store.openCount()).toBe(0);
        for (const r of refused) {
          const e = JSON.parse(r.text) as { error: { metadata: Record<string, unknown> } };
          expect(e.error.metadata).toMatchObject({ scope: "key", interval: "lifetime", limit });
          expect(Object.keys(e.error.metadata)).toEqual(
            expect.arrayContaining(["spent", "reserved", "resets_at"]),
          );
        }
      });
    }

    it("workspace budget: settled workspace spend <= the daily budget, refusals name the workspace", async () => {
      const ws = await s.call({
        method: "POST",
        url: "/api/v1/workspaces",
        payload: { name: "Budgeted", slug: "budgeted" },
      });
      expect(ws.statusCode).toBe(201);
      const wsId = ws.json<{ data: { id: string } }>().data.id;
      const budget = Number((worstOf(promptTokens) * 50).toFixed(6));
      const put = await s.call({
        method: "PUT",
        url: `/api/v1/workspaces/${wsId}/budgets/daily`,
        payload: { limit_usd: budget },
      });
      expect(put.statusCode).toBe(200);
      const keys = await Promise.all(
        [0, 1, 2, 3].map((i) => createKey({ name: `ws-${i}`, workspace_id: wsId })),
      );
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          chat(s, keys[i % 4]!.key, {
            model: "mock/echo",
            messages: MSG,
            max_tokens: MAX_TOKENS,
            stream: i % 2 === 0,
          }),
        ),
      );
      const refused = results.filter((r) => r.status === 403);
      expect(results.filter((r) => r.status === 200).length + refused.length).toBe(200);
      expect(refused.length).toBeGreaterThan(0);
      const b = await s.call({ method: "GET", url: `/api/v1/workspaces/${wsId}/budgets/daily` });
      const spent = b.json<{ data: { spent_usd: number } }>().data.spent_usd;
      expect(spent).toBeLessThanOrEqual(budget);
      const answered = results.reduce((sum, r, i) => sum + costOf(r, i % 2 === 0), 0);
      expect(spent).toBeCloseTo(answered, 9);
      const e = JSON.parse(refused[0]!.text) as {
        error: { message: string; metadata: Record<string, unknown> };
      };
      expect(e.error.message).toMatch(/Workspace budget exceeded \(daily\)/);
      expect(e.error.metadata).toMatchObject({ scope: "workspace", interval: "daily", limit: budget });
    });

    it("a key that has spent its limit is 403 'Key limit exceeded', naming the interval", async () => {
      const { key, data } = await createKey({ name: "tiny", limit: 0.001, limit_reset: "daily" });
      // A first request: the key's totals are now known to the reservation (kept in memory on
      // SQLite in a file), so the refusal below shows that ingest's write reached them too.
      const first = await chat(s, key, {
        model: "mock/echo",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 1,
      });
      expect(first.status).toBe(200);
      // Spent through the ingest path (another gateway, an import): the ledger is what counts.
      const ingest = await s.call({
        method: "POST",
        url: "/api/v1/activity/generations",
        payload: {
          generations: [
            {
              id: "spent-1",
              created_at: new Date().toISOString(),
              api_key_hash: data.hash,
              model: "mock/echo",
              provider: "mock",
              tokens_prompt: 1,
              tokens_completion: 1,
              usage: 0.001,
              latency_ms: 1,
            },
          ],
        },
      });
      expect(ingest.statusCode).toBe(200);
      const r = await chat(s, key, { model: "mock/echo", messages: [{ role: "user", content: "again" }] });
      expect(r.status).toBe(403);
      const e = JSON.parse(r.text) as {
        error: { message: string; metadata: { interval: string; resets_at: string } };
      };
      expect(e.error.message).toMatch(/^Key limit exceeded \(daily\)/);
      expect(e.error.metadata.interval).toBe("daily");
      expect(e.error.metadata.resets_at).toMatch(/T00:00:00.000Z$/);
    });
  });

describe("a reservation on SQLite in a file reads no table on the hot path", () => {
  it("sequential and concurrent requests of one key read its totals about once a second (COMMITTED_USAGE_TTL_MS), and still stop at its limit", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-enforcement-reads-"));
    const file = await openSqliteStore(join(dir, "gatehouse.db"));
    let reads = 0;
    const readCommitted = file.readCommitted!;
    const s = await startListening({
      store: {
        ...file,
        readCommitted: (q) => {
          if (q.sql.includes("usage_counters")) reads++;
          return readCommitted(q);
        },
      },
      clock: systemClock,
      env: { RATE_LIMIT_MANAGEMENT_MAX: "100000" },
    });
    try {
      const created = await s.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: { name: "reads", limit: 0.002 },
      });
      const { key } = created.json<{ key: string }>();
      const body = { model: "mock/echo", messages: [{ role: "user", content: "count me" }], max_tokens: 20 };
      const started = Date.now();
      for (let i = 0; i < 20; i++) expect((await chat(s, key, body)).status).toBe(200);
      // One after another (each answer waits for its record to commit): read when first needed,
      // then at most once per second elapsed.
      expect(reads).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 1000) + 1);
      const statuses = (await Promise.all(Array.from({ length: 40 }, () => chat(s, key, body)))).map(
        (r) => r.status,
      );
      expect(statuses).toContain(200);
      // Concurrent: a stale copy is read through while a write of this key is in flight, but
      // never once per reservation (60 here).
      expect(reads).toBeLessThan(30);
      const usage = (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{
        data: { usage: number };
      }>().data.usage;
      expect(usage).toBeLessThanOrEqual(0.002);
    } finally {
      await s.close();
      await file.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Holds in memory (SQLite) and in PostgreSQL's shared table.
for (const f of STORE_FACTORIES)
  describe.skipIf(f.skip)(`refusals at the edges of the windows (a manual clock, ${f.name})`, () => {
    let s: ListeningApp;
    let store: Awaited<ReturnType<StoreFactory["open"]>>;
    beforeAll(async () => {
      store = await f.open();
      s = await startListening({
        store,
        env: { RATE_LIMIT_MANAGEMENT_MAX: "100000" },
        ...(f.name === "postgres"
          ? { config: { gateway: { ...loadConfig({}).gateway, reservations: "postgres" as const } } }
          : {}),
      });
      expect(s.app.gateway.holds.store.kind).toBe(f.name === "postgres" ? "postgres" : "memory");
    });
    afterAll(async () => {
      await s?.close();
      await store?.dispose();
    });

    const workspaceWithBudgets = async (slug: string, budgets: Record<string, number>) => {
      const ws = await s.call({ method: "POST", url: "/api/v1/workspaces", payload: { name: slug, slug } });
      expect(ws.statusCode).toBe(201);
      const wsId = ws.json<{ data: { id: string } }>().data.id;
      for (const [interval, limit_usd] of Object.entries(budgets)) {
        const put = await s.call({
          method: "PUT",
          url: `/api/v1/workspaces/${wsId}/budgets/${interval}`,
          payload: { limit_usd },
        });
        expect(put.statusCode).toBe(200);
      }
      const created = await s.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: { name: `${slug}-key`, workspace_id: wsId },
      });
      expect(created.statusCode).toBe(201);
      return created.json<{ key: string; data: { hash: string } }>();
    };
    /** Spend recorded through the ingest path, now by the manual clock. */
    const spend = async (id: string, keyHash: string, usd: number) => {
      const r = await s.call({
        method: "POST",
        url: "/api/v1/activity/generations",
        payload: {
          generations: [
            {
              id,
              created_at: s.clock.now().toISOString(),
              api_key_hash: keyHash,
              model: "mock/echo",
              provider: "mock",
              tokens_prompt: 1,
              tokens_completion: 1,
              usage: usd,
              latency_ms: 1,
            },
          ],
        },
      });
      expect(r.statusCode).toBe(200);
    };
    type Refusal = { error: { message: string; metadata: Record<string, unknown> } };

    it("four budgets, the daily one spent: the refusal names the broadest budget that cannot take the request", async () => {
      s.clock.set("2026-11-18T12:00:00.000Z");
      const { key, data } = await workspaceWithBudgets("four-budgets", {
        daily: 0.0005,
        weekly: 0.001,
        monthly: 0.0015,
        lifetime: 0.004,
      });
      await spend("four-budgets-1", data.hash, 0.0005);
      // Worst case ~0.0012 USD: the daily budget is spent, the weekly (0.0005 left) and monthly
      // (0.001 left) ones cannot take it either, the lifetime one (0.0035 left) can. Tomorrow the
      // daily budget resets and the monthly one still refuses: the refusal names it.
      const r = await chat(s, key, {
        model: "mock/echo",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 600,
      });
      expect(r.status).toBe(403);
      const e = JSON.parse(r.text) as Refusal;
      expect(e.error.message).toMatch(/^Workspace budget exceeded \(monthly\)/);
      expect(e.error.metadata).toMatchObject({
        scope: "workspace",
        interval: "monthly",
        limit: 0.0015,
        spent: 0.0005,
        reserved: 0,
        resets_at: "2026-12-01T00:00:00.000Z",
      });
      // Small enough for every budget but the spent daily one: that one is named.
      const small = await chat(s, key, {
        model: "mock/echo",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 10,
      });
      expect(small.status).toBe(403);
      expect((JSON.parse(small.text) as Refusal).error.metadata).toMatchObject({
        interval: "daily",
        resets_at: "2026-11-19T00:00:00.000Z",
      });
    });

    it("no max_tokens: a budget that can take a capped request is not named, the one that cannot take a token is", async () => {
      s.clock.set("2026-11-18T12:00:00.000Z");
      const { key, data } = await workspaceWithBudgets("capped-budgets", { daily: 0.001, monthly: 0.002 });
      // The daily budget has less left than the prompt costs; the monthly one (0.0010005 left) is
      // short of the model's maximum (1024 completion tokens, ~0.002 USD) but would take a capped
      // request: the daily budget is what refuses this one.
      await spend("capped-budgets-1", data.hash, 0.0009995);
      const r = await chat(s, key, { model: "mock/echo", messages: [{ role: "user", content: "hi" }] });
      expect(r.status).toBe(403);
      const e = JSON.parse(r.text) as Refusal;
      expect(e.error.message).toMatch(/^Workspace budget exceeded \(daily\)/);
      expect(e.error.metadata).toMatchObject({ interval: "daily", resets_at: "2026-11-19T00:00:00.000Z" });
    });

    /**
     * Starts a stream of 40 chunks 50 ms apart (2 s) with no max_tokens, which holds the model's
     * maximum, and waits for its hold (taken at the clock's time).
     */
    const longStream = async (key: string) => {
      const holds = s.app.gateway.holds;
      const before = holds.liveCount;
      const answer = chat(s, key, {
        model: "mock/echo",
        stream: true,
        messages: [{ role: "user", content: "long [[mock chunks=40 chunk_delay_ms=50]]" }],
      });
      for (let i = 0; i < 200 && holds.liveCount === before; i++) await new Promise((r) => setTimeout(r, 5));
      expect(holds.liveCount).toBe(before + 1);
      return { answer };
    };
    const keyUsage = async (key: string) =>
      (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{
        data: { usage: number; usage_weekly: number; limit_remaining: number };
      }>().data;

    it("a request in flight across a weekly reset (Sunday to Monday) holds nothing in the new week, and is charged to the old one", async () => {
      s.clock.set("2026-11-22T23:59:59.000Z"); // a Sunday
      const created = await s.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: { name: "weekly", limit: 0.0025, limit_reset: "weekly" },
      });
      const { key } = created.json<{ key: string }>();
      const a = (await longStream(key)).answer; // holds ~0.00206 USD of the week's 0.0025
      s.clock.set("2026-11-23T00:00:01.000Z"); // Monday: a new week
      // ~0.0012 USD: it fits the new week's whole limit; the old week's hold is not in this week.
      const b = await chat(s, key, {
        model: "mock/echo",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 600,
      });
      expect(b.status, b.text).toBe(200);
      const answered = await a;
      expect(answered.status).toBe(200);
      const costA = costOf(answered, true);
      const costB = costOf(b, false);
      expect(costA).toBeGreaterThan(0);
      const usage = await keyUsage(key);
      expect(usage.usage).toBeCloseTo(costA + costB, 9);
      expect(usage.usage_weekly).toBeCloseTo(costB, 9); // A's charge is the old week's
    });

    it("a request in flight across midnight holds nothing in the new day's budget, and still holds in the month's", async () => {
      s.clock.set("2026-11-18T23:59:59.000Z");
      const { key } = await workspaceWithBudgets("midnight", { daily: 0.0025, monthly: 0.004 });
      const a = (await longStream(key)).answer; // holds ~0.00206 USD, in the 18th and in November
      s.clock.set("2026-11-19T00:00:01.000Z");
      // ~0.0012 USD: the new day's budget has all of it; November has 0.004 - 0.00206 left.
      const b = await chat(s, key, {
        model: "mock/echo",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 600,
      });
      expect(b.status, b.text).toBe(200);
      // ~0.002 USD: November's budget, A's hold in it, cannot take it.
      const c = await chat(s, key, {
        model: "mock/echo",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 1000,
      });
      expect(c.status).toBe(403);
      const e = JSON.parse(c.text) as Refusal;
      expect(e.error.message).toMatch(/^Workspace budget exceeded \(monthly\)/);
      expect(e.error.metadata.reserved).toBeGreaterThan(0.002);
      expect((await a).status).toBe(200);
    });
  });
