import { afterEach, describe, expect, it } from "vitest";
import { CAP_ERROR, pruneDeliveries, recordError } from "../../src/broadcast/outbox/queue-upkeep.js";
import { statusOfRow } from "../../src/broadcast/operations/delivery-status.js";
import { sampledIn } from "../../src/broadcast/sampling.js";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import { createWebhook, deliveries, ingestRecords, makeBroadcastApp, records } from "./broadcast-helpers.js";

/**
 * Broadcast end to end on real components: the HTTP ingest endpoint writes the outbox in its
 * transaction, the Broadcaster delivers to a local OTLP/HTTP receiver on 127.0.0.1 through the
 * webhook encoder, and the receiver decodes the spans' generation ids.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(over: Parameters<typeof makeBroadcastApp>[0] = {}) {
  const t = await makeBroadcastApp(over);
  const rx = new TestReceiver();
  await rx.start();
  cleanups.push(
    () => t.close(),
    () => rx.stop(),
  );
  return { t, rx };
}

const idsOf = (recs: Record<string, unknown>[]) => recs.map((r) => r.id as string);

describe("Broadcast delivery", () => {
  it("delivers every accepted generation once, in batches, and reports it", async () => {
    // A healthy run must end without any error: a time limit generous enough for a loaded machine.
    const { t, rx } = await setup({ attemptTimeoutMs: 5_000 });
    const dest = await createWebhook(t, rx.url);
    const recs = records(t, 250);
    await ingestRecords(t, recs.slice(0, 200));
    await ingestRecords(t, recs.slice(200));
    t.broadcaster.start();
    await waitFor(() => rx.delivered.size === 250, 10_000, "250 generations delivered");
    expect([...rx.delivered.keys()].sort()).toEqual(idsOf(recs).sort());
    expect([...rx.delivered.values()].every((n) => n === 1)).toBe(true);
    expect(rx.requests.length).toBeLessThan(250); // batched
    await waitFor(async () => (await deliveries(t, dest)).delivered === 250, 5_000, "status");
    const s = await deliveries(t, dest);
    expect(s).toMatchObject({ pending: 0, dead: 0, delivered: 250, last_error: null });
    expect(s.last_success_at).not.toBeNull();
  });

  it("the last success is read from delivered rows, and kept when they are pruned", async () => {
    const { t, rx } = await setup({ attemptTimeoutMs: 5_000 });
    const dest = await createWebhook(t, rx.url);
    expect((await deliveries(t, dest)).last_success_at).toBeNull();
    await ingestRecords(t, records(t, 20));
    t.broadcaster.start();
    await waitFor(async () => (await deliveries(t, dest)).delivered === 20, 5_000, "delivered");
    await t.broadcaster.stop();
    const before = await deliveries(t, dest);
    expect(before.last_success_at).not.toBeNull();
    const db = t.ctx.store.db;
    expect(await db.selectFrom("broadcast_destination_stats").selectAll().execute()).toEqual([]);
    // Delivered rows past their retention are pruned; their last finish moves into the stats.
    await pruneDeliveries(db, Date.now() + 1_000, 0, 3_600_000);
    const after = await deliveries(t, dest);
    expect(after.delivered).toBe(0);
    expect(after.last_success_at).toBe(before.last_success_at);
    // A later fold never moves the last success back.
    await db
      .updateTable("broadcast_destination_stats")
      .set({ last_success_ms: Date.parse(before.last_success_at as string) + 60_000 })
      .execute();
    await ingestRecords(t, records(t, 1));
    t.broadcaster.start();
    await waitFor(async () => (await deliveries(t, dest)).delivered === 1, 5_000, "one more");
    await t.broadcaster.stop();
    await pruneDeliveries(db, Date.now() + 1_000, 0, 3_600_000);
    expect((await deliveries(t, dest)).last_success_at).toBe(
      new Date(Date.parse(before.last_success_at as string) + 60_000).toISOString(),
    );
  });

  it("import-style ingest (broadcast=false) is not delivered", async () => {
    const { t, rx } = await setup();
    await createWebhook(t, rx.url);
    const hist = records(t, 5);
    const res = await t.call({
      method: "POST",
      url: "/api/v1/activity/generations?broadcast=false",
      payload: { generations: hist },
    });
    expect(res.statusCode).toBe(200);
    const live = records(t, 3);
    await ingestRecords(t, live);
    t.broadcaster.start();
    await waitFor(() => rx.delivered.size === 3, 5_000, "live generations");
    await new Promise((d) => setTimeout(d, 200));
    expect([...rx.delivered.keys()].sort()).toEqual(idsOf(live).sort());
  });

  it("retries 500s, 429 with Retry-After, timeouts and resets until delivered", async () => {
    const { t, rx } = await setup({ attemptTimeoutMs: 200 });
    await createWebhook(t, rx.url);
    rx.queue.push(
      { kind: "status", status: 500, body: "boom" },
      { kind: "status", status: 503 },
      { kind: "status", status: 429, headers: { "retry-after": "1" } },
      { kind: "hang", ms: 600 },
      { kind: "reset" },
    );
    const recs = records(t, 10);
    await ingestRecords(t, recs);
    t.broadcaster.start();
    await waitFor(() => rx.delivered.size === 10, 15_000, "delivery after faults");
    const statuses = rx.requests.map((r) => r.status);
    expect(statuses.slice(0, 3)).toEqual([500, 503, 429]);
    // Retry-After: 1 s was honoured between the 429 and the next attempt.
    const i429 = statuses.indexOf(429);
    expect(
      (rx.requests[i429 + 1] as { at: number }).at - (rx.requests[i429] as { at: number }).at,
    ).toBeGreaterThanOrEqual(950);
    expect([...rx.delivered.values()].every((n) => n === 1)).toBe(true);
  });

  it("keeps the queue while the receiver is down and delivers when it is back", async () => {
    const { t, rx } = await setup();
    const dest = await createWebhook(t, rx.url);
    const port = rx.port;
    await rx.stop();
    const recs = records(t, 30);
    await ingestRecords(t, recs);
    t.broadcaster.start();
    await waitFor(async () => (await deliveries(t, dest)).last_error !== null, 5_000, "a failed attempt");
    const down = await deliveries(t, dest);
    expect(down.pending).toBe(30);
    expect(down.last_error).toBe("connection refused");
    await new Promise((d) => setTimeout(d, 300));
    await rx.start(port);
    await waitFor(() => rx.delivered.size === 30, 10_000, "delivery after the receiver came back");
  });

  it("a destination that stays down: past the queue cap the oldest are dropped, visibly", async () => {
    const { t, rx } = await setup({ queueCap: 10 });
    const dest = await createWebhook(t, rx.url);
    const ready = async () => {
      const res = await t.call({ method: "GET", url: "/readyz", auth: null });
      expect(res.statusCode).toBe(200); // drops do not make the server unready
      return res.json<{ broadcast: { dropped_over_cap: number; destinations_dropping: number } }>().broadcast;
    };
    expect(await ready()).toEqual({ dropped_over_cap: 0, destinations_dropping: 0 });
    const port = rx.port;
    await rx.stop();
    const batches = Array.from({ length: 5 }, () => records(t, 5));
    for (const b of batches) await ingestRecords(t, b); // five delivery rows of five
    t.broadcaster.start();
    await waitFor(async () => (await deliveries(t, dest)).dropped_over_cap !== 0, 5_000, "cap enforced");
    const s = await deliveries(t, dest);
    expect(s).toMatchObject({ pending: 10, dead: 15, dropped_over_cap: 15 });
    const letters = s.recent_dead_letters as { generations: number; last_error: string }[];
    expect(letters).toHaveLength(3);
    expect(letters.every((l) => l.last_error === CAP_ERROR && l.generations === 5)).toBe(true);
    expect(await ready()).toEqual({ dropped_over_cap: 15, destinations_dropping: 1 });
    // The receiver comes back: what was kept arrives, the oldest (dropped) do not.
    await rx.start(port);
    await waitFor(() => rx.delivered.size === 10, 10_000, "the kept generations delivered");
    await new Promise((d) => setTimeout(d, 200));
    expect([...rx.delivered.keys()].sort()).toEqual(idsOf(batches.slice(3).flat()).sort());
  });

  it("dead-letters after the last attempt with its last error; replay delivers it", async () => {
    const { t, rx } = await setup({ maxAttempts: 3 });
    const dest = await createWebhook(t, rx.url);
    rx.fallback = { kind: "status", status: 502, body: "bad gateway" };
    const recs = records(t, 4);
    await ingestRecords(t, recs);
    t.broadcaster.start();
    await waitFor(async () => (await deliveries(t, dest)).dead === 4, 5_000, "dead letter");
    const s = await deliveries(t, dest);
    expect(s.pending).toBe(0);
    // The status only: a private receiver's body (loopback here) is never shown.
    expect(s.last_error).toBe("HTTP 502");
    const letters = s.recent_dead_letters as { attempts: number; from: string; last_error: string }[];
    expect(letters[0]?.attempts).toBe(3);
    expect(rx.requests.length).toBe(3);
    // Content is gone once nothing pending needs it.
    await waitFor(
      async () => (await t.ctx.store.db.selectFrom("broadcast_batches").select("seq").execute()).length === 0,
      3_000,
      "outbox batch released",
    );

    rx.fallback = { kind: "ok" };
    const from = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const to = new Date().toISOString();
    const replay = await t.call({
      method: "POST",
      url: `/api/v1/observability/destinations/${dest}/replay`,
      payload: { from, to },
    });
    expect(replay.statusCode).toBe(202);
    expect(replay.json<{ data: { offered: number } }>().data.offered).toBe(4);
    await waitFor(() => rx.delivered.size === 4, 5_000, "replayed generations");
    expect([...rx.delivered.keys()].sort()).toEqual(idsOf(recs).sort());
  });

  it("a 4xx other than 408/409/429 is dead-lettered at once", async () => {
    const { t, rx } = await setup();
    const dest = await createWebhook(t, rx.url);
    rx.fallback = { kind: "status", status: 401, body: "no" };
    await ingestRecords(t, records(t, 2));
    t.broadcaster.start();
    await waitFor(async () => (await deliveries(t, dest)).dead === 2, 5_000, "dead letter");
    expect(rx.requests.length).toBe(1);
  });

  it("disabling pauses at once, enabling resumes, deleting discards the queue", async () => {
    const { t, rx } = await setup();
    const dest = await createWebhook(t, rx.url);
    const patch = (enabled: boolean) =>
      t.call({ method: "PATCH", url: `/api/v1/observability/destinations/${dest}`, payload: { enabled } });
    await ingestRecords(t, records(t, 5)); // offered while enabled
    expect((await patch(false)).statusCode).toBe(200);
    t.broadcaster.start();
    await new Promise((d) => setTimeout(d, 300));
    expect(rx.requests.length).toBe(0);
    expect((await deliveries(t, dest)).pending).toBe(5);
    await patch(true);
    await waitFor(() => rx.delivered.size === 5, 5_000, "resumed delivery");

    rx.fallback = { kind: "status", status: 503 };
    await ingestRecords(t, records(t, 3));
    await waitFor(() => rx.requests.some((r) => r.status === 503), 5_000, "failing attempt");
    const del = await t.call({ method: "DELETE", url: `/api/v1/observability/destinations/${dest}` });
    expect(del.statusCode).toBe(200);
    const left = await t.ctx.store.db
      .selectFrom("broadcast_deliveries")
      .select("id")
      .where("destination_id", "=", dest)
      .execute();
    expect(left).toEqual([]);
    // An attempt still in flight records its error after the discard; the next prune removes it.
    await t.broadcaster.stop();
    const db = t.ctx.store.db;
    await recordError(db, dest, Date.now(), "HTTP 503 after the delete");
    const statsOf = () =>
      db
        .selectFrom("broadcast_destination_stats")
        .select("destination_id")
        .where("destination_id", "=", dest)
        .execute();
    expect(await statsOf()).toHaveLength(1);
    await pruneDeliveries(db, Date.now(), 3_600_000, 3_600_000);
    expect(await statsOf()).toEqual([]);
  });

  it("sampling end to end: the delivered set is the deterministic prediction, and replay sends the same", async () => {
    const { t, rx } = await setup();
    const dest = await createWebhook(t, rx.url, { sampling_rate: 0.3 });
    const recs = records(t, 400);
    await ingestRecords(t, recs);
    const expected = idsOf(recs).filter((id) => sampledIn(dest, 0.3, null, id));
    t.broadcaster.start();
    await waitFor(() => rx.delivered.size === expected.length, 5_000, "sampled delivery");
    await new Promise((d) => setTimeout(d, 200));
    expect([...rx.delivered.keys()].sort()).toEqual(expected.sort());
    rx.delivered.clear();
    const replay = await t.call({
      method: "POST",
      url: `/api/v1/observability/destinations/${dest}/replay`,
      payload: { from: new Date(Date.now() - 7_200_000).toISOString(), to: new Date().toISOString() },
    });
    expect(replay.statusCode).toBe(202);
    await waitFor(() => rx.delivered.size === expected.length, 5_000, "replayed sample");
    await new Promise((d) => setTimeout(d, 200));
    expect([...rx.delivered.keys()].sort()).toEqual(expected.sort());
  });

  it("selection: filter rules (an or group) decide what the destination takes", async () => {
    const { t, rx } = await setup();
    await createWebhook(t, rx.url, {
      filter_rules: {
        groups: [
          {
            logic: "or",
            rules: [
              { field: "model", operator: "starts_with", value: "anthropic/" },
              { field: "total_tokens", operator: "gt", value: 1000 },
            ],
          },
        ],
      },
    });
    const a = records(t, 3, { model: "anthropic/claude-3" });
    const b = records(t, 3, { tokens_prompt: 2000 });
    const c = records(t, 3);
    await ingestRecords(t, [...a, ...b, ...c]);
    t.broadcaster.start();
    await waitFor(() => rx.delivered.size === 6, 5_000, "filtered delivery");
    await new Promise((d) => setTimeout(d, 200));
    expect([...rx.delivered.keys()].sort()).toEqual(idsOf([...a, ...b]).sort());
  });
});

describe("Broadcast delivery: Retry-After", () => {
  it("holds the whole destination for a Retry-After, not only the rows that received it", async () => {
    const { t, rx } = await setup({ attemptTimeoutMs: 5_000 });
    const dest = await createWebhook(t, rx.url);
    rx.queue.push({ kind: "status", status: 429, headers: { "retry-after": "2" } });
    const first = records(t, 3);
    await ingestRecords(t, first);
    t.broadcaster.start();
    await waitFor(() => rx.requests.length === 1, 5_000, "the first attempt");
    // New generations arrive while the receiver asked for two seconds of quiet.
    const later = records(t, 3);
    await ingestRecords(t, later);
    await waitFor(() => rx.delivered.size === 6, 10_000, "everything delivered after the wait");
    const at429 = (rx.requests[0] as { at: number }).at;
    for (const r of rx.requests.slice(1)) expect(r.at - at429).toBeGreaterThanOrEqual(1_950);
    await waitFor(
      async () => (await statusOfRow(t.ctx.store.db, dest, Date.now())).delivered === 6,
      5_000,
      "recorded as delivered",
    );
  });
});
