import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";
import { activityRows, ingest, wireRecord } from "./ingest-helpers.js";

/**
 * The usage ledger's counters are 64-bit integers of nano-USD: at most 9223372036.854775807 USD per
 * key or workspace and window. A record may carry up to 1e9 USD in `usage` and as much in
 * `byok_usage_inference`, so ten such records for one key were enough to overflow a counter: the
 * driver refused the value and ingest answered 500, and on PostgreSQL a key whose total had grown
 * near the limit made every later batch for it fail the same way. Such a batch is now 400, nothing
 * of it is recorded, and the key keeps working.
 */
const LIMIT_MESSAGE =
  "generations: usage and byok_usage_inference would take a key's or workspace's total past " +
  "9223372036.854775807 USD, the most the usage ledger holds; nothing was recorded";

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`ingest on ${f.name}: the usage ledger's limit`, () => {
    let t: TestApp;
    let store: Awaited<ReturnType<typeof f.open>>;
    beforeAll(async () => {
      store = await f.open();
      t = await makeTestApp({ store });
    });
    afterAll(async () => {
      await t?.close();
      await store?.dispose();
    });

    /** A key in a workspace of its own, so that each test's totals start at 0. */
    let workspaces = 0;
    const newKey = async () => {
      const slug = `spender-${++workspaces}`;
      const ws = await t.call({ method: "POST", url: "/api/v1/workspaces", payload: { name: slug, slug } });
      const r = await t.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: { name: "big spender", workspace_id: ws.json().data.id },
      });
      return hashKey(r.json().key as string);
    };
    const keyUsage = async (hash: string) =>
      (await t.call({ method: "GET", url: `/api/v1/keys/${hash}` })).json().data as {
        usage: number;
        byok_usage: number;
      };

    it("one batch past the limit is 400 and records nothing; the key still accepts activity", async () => {
      const hash = await newKey();
      for (const field of ["usage", "byok_usage_inference"]) {
        const recs = Array.from({ length: 10 }, () =>
          wireRecord(t, { api_key_hash: hash, usage: 0, [field]: 1e9 }),
        );
        const res = await ingest(t, recs);
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error).toEqual({ code: 400, message: LIMIT_MESSAGE, metadata: null });
        const ids = recs.map((r) => `'${r.id as string}'`).join(", ");
        expect(await activityRows(t, `id IN (${ids})`)).toEqual([]);
      }
      expect(await keyUsage(hash)).toMatchObject({ usage: 0, byok_usage: 0 });
      const ok = await ingest(t, [wireRecord(t, { api_key_hash: hash, usage: 1.5 })]);
      expect(ok.statusCode, ok.body).toBe(200);
      expect((await keyUsage(hash)).usage).toBe(1.5);
    });

    it("a batch that would take a stored total past the limit is 400; the total stays, smaller batches pass", async () => {
      const hash = await newKey();
      for (let i = 0; i < 9; i++) {
        const res = await ingest(t, [wireRecord(t, { api_key_hash: hash, usage: 1e9 })]);
        expect(res.statusCode, res.body).toBe(200);
      }
      expect((await keyUsage(hash)).usage).toBe(9e9);
      const over = wireRecord(t, { api_key_hash: hash, usage: 1e9 });
      const res = await ingest(t, [over]);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error.message).toBe(LIMIT_MESSAGE);
      expect(await activityRows(t, `id = '${over.id as string}'`)).toEqual([]);
      expect((await keyUsage(hash)).usage).toBe(9e9);
      // What still fits below the limit is accepted, and then nothing more.
      const fits = await ingest(t, [wireRecord(t, { api_key_hash: hash, usage: 223372036.85 })]);
      expect(fits.statusCode, fits.body).toBe(200);
      const again = await ingest(t, [wireRecord(t, { api_key_hash: hash, usage: 0.01 })]);
      expect(again.statusCode, again.body).toBe(400);
    });
  });
}
