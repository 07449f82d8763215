import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";
import { activityRows, ingest, wireRecord } from "./ingest-helpers.js";

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`ingest on ${f.name}: exactly once under retries and concurrency`, () => {
    let t: TestApp;
    let store: Awaited<ReturnType<typeof f.open>>;
    let hash: string;
    beforeAll(async () => {
      store = await f.open();
      t = await makeTestApp({ store });
      const created = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "gateway key" } });
      hash = hashKey(created.json().key as string);
    });
    afterAll(async () => {
      await t?.close();
      await store?.dispose();
    });

    it("concurrent overlapping batches and retries count every id once in the ledger and the activity store", async () => {
      // 2,000 records of 1 nano-dollar.. 2,000 nano-dollars; 8 batches of 500 overlapping by half.
      const recs = Array.from({ length: 2_000 }, (_, i) =>
        wireRecord(t, {
          api_key_hash: hash,
          id: `c-${i}`,
          usage: (i + 1) / 1e9,
          created_at: "2026-11-18T09:00:00Z",
        }),
      );
      const batches = Array.from({ length: 7 }, (_, b) => recs.slice(b * 250, b * 250 + 500));
      const results = await Promise.all([...batches, ...batches.slice(0, 3)].map((b) => ingest(t, b)));
      for (const r of results) expect(r.statusCode).toBe(200);
      const accepted = results.reduce((s, r) => s + (r.json().data.accepted as number), 0);
      expect(accepted).toBe(2_000);
      const key = (await t.call({ method: "GET", url: `/api/v1/keys/${hash}` })).json().data;
      expect(key.usage).toBe((2_000 * 2_001) / 2 / 1e9);
      const rows = await t.ctx.activity.query(
        {
          sql: "SELECT count(*) AS n, sum(usage_nano) AS s FROM generations WHERE organization_id = $org",
          params: { org: t.organizationId },
        },
        { timeoutMs: 5_000 },
      );
      expect(rows).toEqual([{ n: 2_000n, s: BigInt((2_000 * 2_001) / 2) }]);
    });

    it("a record-store commit that fails leaves no activity row; the retry writes it once", async () => {
      // The batch's rows go to the activity store through a buffer written in the record-store
      // transaction that accepts them: a commit that fails (as a crash before it) leaves nothing.
      const rec = wireRecord(t, { api_key_hash: hash, id: "orphan-1", usage: 2 });
      const before = (await t.call({ method: "GET", url: `/api/v1/keys/${hash}` })).json().data.usage;
      const transaction = store.transaction;
      store.transaction = ((fn) =>
        transaction.call(store, async (trx) => {
          await fn(trx);
          throw new Error("simulated crash before the record-store commit");
        })) as typeof store.transaction;
      try {
        expect((await ingest(t, [rec])).statusCode).toBe(500);
      } finally {
        store.transaction = transaction;
      }
      expect(await activityRows(t, "id = 'orphan-1'")).toHaveLength(0);
      expect((await t.call({ method: "GET", url: `/api/v1/keys/${hash}` })).json().data.usage).toBe(before);
      const retry = await ingest(t, [rec]);
      expect(retry.json()).toEqual({ data: { accepted: 1, duplicates: 0 } });
      expect(await activityRows(t, "id = 'orphan-1'")).toHaveLength(1);
      const after = (await t.call({ method: "GET", url: `/api/v1/keys/${hash}` })).json().data.usage;
      expect(after).toBeCloseTo(before + 2, 9);
    });
  });
}
