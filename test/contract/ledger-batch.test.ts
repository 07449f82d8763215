import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addUsage, addUsageBatch, type UsageEntry } from "../../src/domain/usage/ledger.js";
import { toBigInt } from "../../src/lib/money.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

/** addUsageBatch must leave exactly the counters that one addUsage per entry leaves. */
for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`addUsageBatch on ${f.name}`, () => {
    let store: Awaited<ReturnType<typeof f.open>>;
    beforeAll(async () => {
      store = await f.open();
    });
    afterAll(() => store?.dispose());

    const counters = async (org: string) =>
      (
        await store.db
          .selectFrom("usage_counters")
          .selectAll()
          .where("organization_id", "=", org)
          .orderBy(["scope", "scope_id", "window", "window_index"])
          .execute()
      ).map((r) => ({
        ...r,
        window_index: Number(r.window_index),
        usage_nano: toBigInt(r.usage_nano),
        byok_nano: toBigInt(r.byok_nano),
      }));

    it("equals one addUsage per entry (random entries across days, weeks, months, keys, workspaces)", async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              key: fc.constantFrom("k1", "k2"),
              ws: fc.constantFrom("w1", "w2"),
              at: fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2026, 2, 31) }),
              usage: fc.bigInt({ min: 0n, max: 10n ** 15n }),
              byok: fc.bigInt({ min: 0n, max: 10n ** 12n }),
            }),
            { minLength: 1, maxLength: 40 },
          ),
          async (items) => {
            run += 1;
            const entries = (org: string): UsageEntry[] =>
              items.map((i) => ({
                organizationId: org,
                keyHash: `${org}-${i.key}`,
                workspaceId: `${org}-${i.ws}`,
                at: new Date(i.at),
                usageNano: i.usage,
                byokNano: i.byok,
              }));
            const one = `one-${run}`;
            const batch = `batch-${run}`;
            await store.transaction(async (trx) => {
              for (const e of entries(one)) await addUsage(trx, e);
            });
            await store.transaction((trx) => addUsageBatch(trx, entries(batch)));
            // With the store's caps: SQLite's one-parameter (JSON) statement; the same elsewhere.
            const withCaps = `caps-${run}`;
            await store.transaction((trx) => addUsageBatch(trx, entries(withCaps), store.caps));
            const strip = (rows: Awaited<ReturnType<typeof counters>>, org: string) =>
              rows.map((r) => ({ ...r, organization_id: "", scope_id: r.scope_id.slice(org.length) }));
            expect(strip(await counters(batch), batch)).toEqual(strip(await counters(one), one));
            expect(strip(await counters(withCaps), withCaps)).toEqual(strip(await counters(one), one));
          },
        ),
        { numRuns: 25 },
      );
    });
  });
}
