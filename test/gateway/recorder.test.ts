import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { hashKey } from "../../src/lib/ids.js";
import type { KeyPolicy } from "../../src/domain/policy/policy.js";
import { newGenerationId } from "../../src/gateway/chat/serve.js";
import { GenerationRecorder } from "../../src/gateway/recording/generation-recorder.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { servedGeneration } from "../helpers/recording.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * The gateway's group-commit recorder (src/gateway/recording/generation-recorder.ts) on real stores in files, as the
 * server runs them (SQLite, DuckDB and its ingest log: real file writes, so flushes take time and
 * answers finishing meanwhile queue), behind a real listening server: many answers finishing together are each recorded exactly once
 * and in fewer flushes than answers; the key's usage is the sum of the answers' usage.cost; one
 * record the ingest path refuses fails alone; close() stores what is queued.
 */
describe("gateway recorder: group commit", () => {
  let s: ListeningApp;
  let dir: string;
  let store: RecordStore;
  let activity: ActivityStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-recorder-"));
    store = await openSqliteStore(join(dir, "gatehouse.db"));
    activity = await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") });
    s = await startListening({
      store,
      activity,
      clock: systemClock,
      env: { GATEHOUSE_MOCK_LATENCY_MS: "2", RATE_LIMIT_INFERENCE_MAX: "100000" },
    });
  });
  afterAll(async () => {
    await s.close();
    await store.close();
    await activity.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const createKey = async (name: string): Promise<string> => {
    const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name, limit: 100 } });
    expect(r.statusCode).toBe(201);
    return r.json<{ key: string }>().key;
  };
  const usageOf = async (key: string): Promise<number> =>
    (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>().data
      .usage;
  const policyOf = async (key: string): Promise<KeyPolicy> =>
    (await s.ctx.policy.keyByHash(hashKey(key))) as KeyPolicy;
  /** Rows of these generations (ids, or generations) in `table`. */
  const countWhere = async (
    table: "gateway_generations" | "generations_seen",
    of: readonly (string | { id: string })[],
  ) => {
    const ids = of.map((x) => (typeof x === "string" ? x : x.id));
    const r = await s.ctx.store.db
      .selectFrom(table)
      .select(sql<string>`count(*)`.as("n"))
      .where("organization_id", "=", s.organizationId)
      .where("id", "in", ids)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  };

  const served = servedGeneration;

  it("150 concurrent answers (both modes): each recorded once, in fewer flushes; usage = sum of usage.cost", async () => {
    const key = await createKey("concurrent");
    const recorder = s.app.gateway.recorder;
    const flushes0 = recorder.flushes;
    const recorded0 = recorder.recorded;
    const results = await Promise.all(
      Array.from({ length: 150 }, async (_, i) => {
        const stream = i % 2 === 1;
        const r = await chat(s, key, {
          model: "mock/echo",
          messages: [{ role: "user", content: `request number ${i}` }],
          max_tokens: 50,
          stream,
        });
        expect(r.status).toBe(200);
        const id = r.id as string;
        return { id, cost: r.cost ?? Number.NaN };
      }),
    );
    const ids = results.map((r) => r.id);
    expect(new Set(ids).size).toBe(150);
    // Answered once journaled (durable recording on a SQLite file): the commits follow.
    await recorder.settled();
    expect(await countWhere("gateway_generations", ids)).toBe(150);
    expect(await countWhere("generations_seen", ids)).toBe(150);
    expect(recorder.recorded - recorded0).toBe(150);
    expect(recorder.flushes - flushes0).toBeLessThan(150);
    const answered = results.reduce((sum, r) => sum + r.cost, 0);
    expect(answered).toBeGreaterThan(0);
    expect(await usageOf(key)).toBeCloseTo(answered, 9);
    expect(await s.app.gateway.holds.store.openCount()).toBe(0);
  });

  it("a batch with one record the row builder refuses: the others are stored, only that one fails", async () => {
    const key = await createKey("one-bad");
    const policy = await policyOf(key);
    const recorder = new GenerationRecorder(s.app.gateway.recording);
    const good = Array.from({ length: 6 }, () => served(policy));
    const bad = served(policy, { promptTokens: -1 });
    // Queued in one turn: one flush takes all seven, the batch fails, each is retried alone.
    const outcomes = await Promise.allSettled(
      [...good.slice(0, 3), bad, ...good.slice(3)].map((g) => recorder.record(g)),
    );
    expect(outcomes.map((o) => o.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
      "fulfilled",
    ]);
    expect(String((outcomes[3] as PromiseRejectedResult).reason)).toMatch(/tokens_prompt/);
    expect(await countWhere("generations_seen", good)).toBe(6);
    expect(await countWhere("gateway_generations", good)).toBe(6);
    expect(await countWhere("generations_seen", [bad.id])).toBe(0);
    expect(await countWhere("gateway_generations", [bad.id])).toBe(0);
    expect(await usageOf(key)).toBeCloseTo(6 * 20_000e-9, 12);
  });

  it("one flush of 40 records (details in statements of 16, 16 and 8 rows) stores every detail as its own", async () => {
    const key = await createKey("forty");
    const policy = await policyOf(key);
    const recorder = new GenerationRecorder(s.app.gateway.recording);
    const gs = Array.from({ length: 40 }, (_, i) =>
      served(policy, { completionTokens: i + 1, sessionId: `s-${i}` }),
    );
    await Promise.all(gs.map((g) => recorder.record(g)));
    expect(recorder.flushes).toBe(1);
    const rows = await s.ctx.store.db
      .selectFrom("gateway_generations")
      .select(["id", "key_hash", "detail"])
      .where("organization_id", "=", s.organizationId)
      .where(
        "id",
        "in",
        gs.map((g) => g.id),
      )
      .execute();
    expect(rows).toHaveLength(40);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const [i, g] of gs.entries()) {
      const row = byId.get(g.id);
      expect(row?.key_hash).toBe(policy.hash);
      const detail = JSON.parse(row?.detail ?? "{}") as { tokens_completion: number; session_id: string };
      expect(detail).toMatchObject({ tokens_completion: i + 1, session_id: `s-${i}` });
    }
  });

  it("the same generation recorded twice (one batch, then again) counts once", async () => {
    const key = await createKey("twice");
    const policy = await policyOf(key);
    const recorder = new GenerationRecorder(s.app.gateway.recording);
    const g = served(policy);
    await Promise.all([recorder.record(g), recorder.record(g)]);
    await recorder.record(g);
    expect(await countWhere("generations_seen", [g.id])).toBe(1);
    expect(await countWhere("gateway_generations", [g.id])).toBe(1);
    expect(await usageOf(key)).toBeCloseTo(20_000e-9, 12);
  });

  it("a Broadcast listener (onLive) that throws fails no request: the records are stored once", async () => {
    const key = await createKey("listener");
    const policy = await policyOf(key);
    let calls = 0;
    const recorder = new GenerationRecorder({
      ...s.app.gateway.recording,
      onLive: () => {
        calls++;
        throw new Error("listener down");
      },
    });
    const gs = Array.from({ length: 3 }, () => served(policy));
    await Promise.all(gs.map((g) => recorder.record(g)));
    expect(calls).toBe(3);
    expect(await countWhere("gateway_generations", gs)).toBe(3);
    expect(await usageOf(key)).toBeCloseTo(3 * 20_000e-9, 12);
  });

  it("close() stores everything queued before it resolves, also what is queued after the call", async () => {
    const key = await createKey("close");
    const policy = await policyOf(key);
    const recorder = new GenerationRecorder(s.app.gateway.recording);
    const first = Array.from({ length: 40 }, () => served(policy));
    const late = Array.from({ length: 10 }, () => served(policy));
    const stored: string[] = [];
    for (const g of first) void recorder.record(g).then(() => stored.push(g.id));
    expect(recorder.queued).toBe(40);
    const closed = recorder.close();
    for (const g of late) void recorder.record(g).then(() => stored.push(g.id));
    await closed;
    expect(recorder.queued).toBe(0);
    expect(stored.length).toBe(50);
    const ids = [...first, ...late].map((g) => g.id);
    expect(await countWhere("gateway_generations", ids)).toBe(50);
    expect(await usageOf(key)).toBeCloseTo(50 * 20_000e-9, 12);
  });

  it("gatherMs: records queued over several milliseconds share one flush", async () => {
    const key = await createKey("gather");
    const policy = await policyOf(key);
    const recorder = new GenerationRecorder(s.app.gateway.recording, { gatherMs: 1_000 });
    const gs = Array.from({ length: 5 }, () => served(policy));
    const stored: Promise<void>[] = [];
    for (const g of gs) {
      stored.push(recorder.record(g));
      await new Promise((r) => setTimeout(r, 20));
    }
    // Without gathering, the first record would have been flushed alone long ago.
    expect(recorder.flushes).toBe(0);
    await Promise.all(stored);
    expect(recorder.flushes).toBe(1);
    expect(await countWhere("gateway_generations", gs)).toBe(5);
  });

  it("gatherMs: settled() and close() end the wait at once; without them the record waits", async () => {
    const key = await createKey("gather-early");
    const policy = await policyOf(key);
    // An hour: only settled() or close() can end it within the test's time.
    const recorder = new GenerationRecorder(s.app.gateway.recording, { gatherMs: 3_600_000 });
    const first = served(policy);
    let stored = false;
    void recorder.record(first).then(() => (stored = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(stored).toBe(false);
    expect(recorder.queued).toBe(1);
    await recorder.settled();
    expect(stored).toBe(true);
    expect(await countWhere("gateway_generations", [first.id])).toBe(1);

    const second = served(policy);
    const pending = recorder.record(second);
    await recorder.close();
    await pending;
    expect(await countWhere("gateway_generations", [second.id])).toBe(1);
    expect(recorder.flushes).toBe(2);
  });

  it("commitDelayMs: a flush waits for the requests in flight to queue theirs, and ends when the last has", async () => {
    const key = await createKey("siblings");
    const policy = await policyOf(key);
    let inFlight = 3;
    // An hour: only the last request queueing (or settled/close) can end the wait in the test.
    const recorder = new GenerationRecorder(s.app.gateway.recording, {
      commitDelayMs: 3_600_000,
      inFlight: () => inFlight,
    });
    const gs = Array.from({ length: 3 }, () => served(policy));
    const stored = [recorder.record(gs[0]!)];
    await new Promise((r) => setTimeout(r, 50));
    stored.push(recorder.record(gs[1]!));
    await new Promise((r) => setTimeout(r, 50));
    // Two of three queued: still waiting for the third.
    expect(recorder.flushes).toBe(0);
    stored.push(recorder.record(gs[2]!));
    await Promise.all(stored);
    expect(recorder.flushes).toBe(1);
    expect(await countWhere("gateway_generations", gs)).toBe(3);

    // Alone in flight: recorded at once, however long the delay.
    inFlight = 1;
    const t0 = performance.now();
    await recorder.record(served(policy));
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(recorder.flushes).toBe(2);
    await recorder.close();
  });

  it("commitDelayMs: requests in flight that never record hold a flush back at most the delay", async () => {
    const key = await createKey("siblings-bound");
    const policy = await policyOf(key);
    const recorder = new GenerationRecorder(s.app.gateway.recording, {
      commitDelayMs: 100,
      inFlight: () => 5,
    });
    const t0 = performance.now();
    const g = served(policy);
    await recorder.record(g);
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(95);
    expect(waited).toBeLessThan(5_000);
    expect(await countWhere("gateway_generations", [g.id])).toBe(1);
    await recorder.close();
  });
});

describe("generation ids", () => {
  it("gen-, the creation time in ms, then 24 random base64url characters: unique and sorted by time", () => {
    const t0 = Date.UTC(2026, 10, 24, 12, 0, 0);
    const ids = Array.from({ length: 2_000 }, (_, i) => newGenerationId(t0 + Math.floor(i / 3)));
    for (const id of ids) expect(id).toMatch(/^gen-\d{13}-[A-Za-z0-9_-]{24}$/);
    expect(ids[0]!.slice(4, 17)).toBe(String(t0));
    expect(new Set(ids).size).toBe(ids.length);
    // Ids of different milliseconds sort by time (within one millisecond, by the random part).
    const sorted = [...ids].sort();
    expect(sorted.map((id) => id.slice(0, 17))).toEqual(ids.map((id) => id.slice(0, 17)));
    // The default is now.
    const now = Number(newGenerationId().slice(4, 17));
    expect(Math.abs(now - Date.now())).toBeLessThan(60_000);
  });
});
