import { afterAll, describe, expect, it } from "vitest";
import { Broadcaster } from "../../src/broadcast/delivery/broadcaster.js";
import { defaultEncoderLookup } from "../../src/broadcast/encoder-lookup.js";
import { statusOfRow } from "../../src/broadcast/operations/delivery-status.js";
import { claimDeliveries, markDelivered, splitDelivery } from "../../src/broadcast/outbox/claims-repo.js";
import { pruneDeliveries } from "../../src/broadcast/outbox/queue-upkeep.js";
import { fanOutOnce } from "../../src/broadcast/outbox/fan-out.js";
import { OutboxSignal } from "../../src/broadcast/outbox/outbox-signal.js";
import { systemClock } from "../../src/lib/clock.js";
import { SecretBox } from "../../src/lib/secret-box.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import { makeTestApp, TEST_ENCRYPTION_KEY } from "../helpers/app.js";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import { freshPostgresDatabase, PG_SKIP_REASON, PG_URL } from "../helpers/stores.js";
import { createWebhook, ingestRecords, records, testSettings } from "./broadcast-helpers.js";

/**
 * Two instances share one PostgreSQL outbox: each runs its own Broadcaster on its own connection
 * pool. Leases taken under FOR UPDATE SKIP LOCKED keep a batch with one instance at a time: the
 * receiver never sees a generation while it is already receiving it, and with no failures every
 * generation arrives exactly once.
 */
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe.skipIf(!PG_URL)(
  `Broadcast on PostgreSQL with two instances${PG_URL ? "" : ` (${PG_SKIP_REASON})`}`,
  () => {
    it("never delivers the same batch twice at once, and delivers everything", async () => {
      const dbi = await freshPostgresDatabase();
      const storeA = await openPostgresStore(dbi.url, 5);
      const storeB = await openPostgresStore(dbi.url, 5);
      cleanups.push(async () => {
        await storeA.close();
        await storeB.close();
        await dbi.drop();
      });
      const t = await makeTestApp({ store: storeA, clock: systemClock });
      cleanups.push(() => t.close());
      const rx = new TestReceiver();
      rx.okDelayMs = 20;
      await rx.start();
      cleanups.push(() => rx.stop());
      const dest = await createWebhook(t, rx.url);
      const recs = records(t, 3_000);
      for (let i = 0; i < recs.length; i += 250) await ingestRecords(t, recs.slice(i, i + 250));

      const settings = testSettings({ attemptTimeoutMs: 5_000, concurrency: 2 });
      const make = (store: typeof storeA) =>
        new Broadcaster({
          store,
          secretBox: new SecretBox(TEST_ENCRYPTION_KEY),
          clock: systemClock,
          settings,
          encoderFor: defaultEncoderLookup,
          // Its own, as another instance's: the workers find the outbox rows by polling.
          outboxSignal: new OutboxSignal(),
        });
      const a = make(storeA);
      const b = make(storeB);
      a.start();
      b.start();
      cleanups.push(async () => {
        await a.stop();
        await b.stop();
      });
      await waitFor(() => rx.delivered.size === recs.length, 60_000, "every generation delivered");
      await new Promise((d) => setTimeout(d, 300));
      expect(rx.overlaps).toBe(0);
      expect([...rx.delivered.values()].every((n) => n === 1)).toBe(true);
      // Maintenance SQL on PostgreSQL: pruning folds the last success into the stats.
      await a.stop();
      await b.stop();
      const before = await statusOfRow(storeA.db, dest, Date.now());
      expect(before.delivered).toBe(recs.length);
      await pruneDeliveries(storeA.db, Date.now() + 1_000, 0, 3_600_000);
      const after = await statusOfRow(storeA.db, dest, Date.now());
      expect(after).toMatchObject({ delivered: 0, pending: 0, last_success_at: before.last_success_at });
      expect(after.last_success_at).not.toBeNull();
    }, 90_000);

    it("splits a leased delivery row into parts that settle on their own", async () => {
      const dbi = await freshPostgresDatabase();
      const store = await openPostgresStore(dbi.url, 2);
      cleanups.push(async () => {
        await store.close();
        await dbi.drop();
      });
      const t = await makeTestApp({ store, clock: systemClock });
      cleanups.push(() => t.close());
      const dest = await createWebhook(t, "http://127.0.0.1:9/v1/traces");
      const recs = records(t, 3);
      await ingestRecords(t, recs);
      await fanOutOnce(store, { nowMs: Date.now(), chunkOf: () => 100, maxBatches: 10 });
      const claim = await claimDeliveries(store, dest, "me/1", Date.now(), 60_000, 100);
      expect(claim.rows).toHaveLength(1);
      const row = claim.rows[0]!;
      const ids = recs.map((r) => r.id as string);
      expect(await splitDelivery(store, row.id, "other/1", [{ ids, minCreatedMs: 0, maxCreatedMs: 0 }])).toBe(
        null,
      );
      const parts = await splitDelivery(store, row.id, "me/1", [
        { ids: ids.slice(0, 2), minCreatedMs: 1, maxCreatedMs: 2 },
        { ids: ids.slice(2), minCreatedMs: 3, maxCreatedMs: 3 },
      ]);
      expect(parts).toHaveLength(2);
      expect(parts![0]).toBe(row.id);
      expect(await markDelivered(store.db, [parts![0]!], "me/1", Date.now())).toBe(1);
      const status = await statusOfRow(store.db, dest, Date.now());
      expect(status).toMatchObject({ delivered: 2, pending: 1 });
    });
  },
);
