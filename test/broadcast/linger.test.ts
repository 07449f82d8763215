import { afterEach, describe, expect, it } from "vitest";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import { createWebhook, deliveries, ingestRecords, makeBroadcastApp, records } from "./broadcast-helpers.js";

/**
 * BROADCAST_LINGER_MS (docs/broadcast.md "Linger"): small deliveries gather for up to the linger
 * into one request per destination; a full batch does not wait; a lone generation waits about
 * the linger. Real HTTP ingest, the real Broadcaster (running), a local OTLP/HTTP receiver.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(lingerMs: number) {
  const t = await makeBroadcastApp({ lingerMs, attemptTimeoutMs: 5_000 });
  const rx = new TestReceiver();
  await rx.start();
  cleanups.push(
    () => t.close(),
    () => rx.stop(),
  );
  return { t, rx };
}

describe("Broadcast linger", () => {
  it("generations accepted one by one within the linger go out in one request", async () => {
    const linger = 1_500;
    const { t, rx } = await setup(linger);
    const dest = await createWebhook(t, rx.url);
    t.broadcaster.start();
    const recs = records(t, 8);
    const started = Date.now();
    // Eight separate acceptances (eight outbox batches), as the gateway's recorder makes them.
    for (const r of recs) await ingestRecords(t, [r]);
    const accepted = Date.now() - started;
    expect(accepted, "the eight ingests must fit in the linger for this test to mean anything").toBeLessThan(
      linger,
    );
    await waitFor(() => rx.delivered.size === 8, 10_000, "8 generations delivered");
    expect(rx.requests.length).toBe(1);
    expect([...rx.delivered.values()].every((n) => n === 1)).toBe(true);
    await waitFor(async () => (await deliveries(t, dest)).delivered === 8, 5_000, "status");
  });

  it("a lone generation is delivered after about the linger, not before and not much later", async () => {
    const linger = 400;
    const { t, rx } = await setup(linger);
    await createWebhook(t, rx.url);
    t.broadcaster.start();
    const started = Date.now();
    await ingestRecords(t, records(t, 1));
    await waitFor(() => rx.delivered.size === 1, 10_000, "1 generation delivered");
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(linger - 50);
    expect(took).toBeLessThan(linger + 1_500);
    expect(rx.requests.length).toBe(1);
  });

  it("a full batch pending does not wait for the linger", async () => {
    const { t, rx } = await setup(20_000);
    await createWebhook(t, rx.url);
    t.broadcaster.start();
    const started = Date.now();
    // 250 generations: two full batches of the webhook encoder (100) go at once; the rest waits.
    await ingestRecords(t, records(t, 250));
    await waitFor(() => rx.delivered.size >= 200, 5_000, "the full batches");
    expect(Date.now() - started).toBeLessThan(5_000);
    await new Promise((d) => setTimeout(d, 300));
    expect(rx.delivered.size).toBe(200);
    expect(rx.requests.every((r) => r.ids.length === 100)).toBe(true);
  });

  it("with BROADCAST_LINGER_MS=0 each acceptance is sent at once", async () => {
    const { t, rx } = await setup(0);
    await createWebhook(t, rx.url);
    t.broadcaster.start();
    for (let i = 1; i <= 3; i++) {
      const started = Date.now();
      await ingestRecords(t, records(t, 1));
      await waitFor(() => rx.delivered.size === i, 5_000, `generation ${i}`);
      expect(Date.now() - started).toBeLessThan(1_000);
    }
    expect(rx.requests.length).toBe(3);
  });
});
