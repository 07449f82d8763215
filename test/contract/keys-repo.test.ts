import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  findKey,
  findOrdinaryKey,
  insertKey,
  listOrdinaryKeys,
  softDeleteOrdinaryKey,
  updateOrdinaryKey,
  type NewKey,
} from "../../src/domain/keys/key-repo.js";
import { limitRemainingNano, toKeyRecords } from "../../src/domain/keys/key-record.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { addUsage, zeroTotals } from "../../src/domain/usage/ledger.js";
import { ManualClock } from "../../src/lib/clock.js";
import { hashKey } from "../../src/lib/ids.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`key repository on ${f.name}`, () => {
    let store: Awaited<ReturnType<typeof f.open>>;
    const clock = new ManualClock(new Date("2026-11-18T12:00:00.000Z"));
    let org: Awaited<ReturnType<typeof createOrganization>>;
    let n = 0;
    const key = (over: Partial<NewKey> = {}): NewKey => ({
      hash: hashKey(`key-${f.name}-${n++}`),
      label: "sk-gh-v1-abc...1234",
      organizationId: org.organizationId,
      workspaceId: org.workspaceId,
      name: "k",
      isManagement: false,
      limitNano: null,
      limitReset: null,
      includeByokInLimit: false,
      creatorUserId: null,
      externalUser: null,
      externalKeyHash: null,
      expiresAt: null,
      now: clock.now(),
      ...over,
    });

    beforeAll(async () => {
      store = await f.open();
      org = await createOrganization(store, clock, "Org");
    });
    afterAll(() => store?.dispose());

    it("round-trips a key, with the largest limit exact", async () => {
      const k = key({
        limitNano: 1_000_000_000_000_000_000n,
        limitReset: "weekly",
        includeByokInLimit: true,
      });
      await insertKey(store.db, k);
      const row = (await findOrdinaryKey(store.db, org.organizationId, k.hash))!;
      const [rec] = await toKeyRecords(store.db, [row], clock.now());
      expect(rec).toMatchObject({
        hash: k.hash,
        limit: 1_000_000_000,
        limit_remaining: 1_000_000_000,
        limit_reset: "weekly",
        include_byok_in_limit: true,
        disabled: false,
        created_at: "2026-11-18T12:00:00.000Z",
      });
    });

    it("finds management keys only through findKey", async () => {
      const mgmt = hashKey(org.managementKey);
      expect(await findKey(store.db, org.organizationId, mgmt)).toBeDefined();
      expect(await findOrdinaryKey(store.db, org.organizationId, mgmt)).toBeUndefined();
      expect(await updateOrdinaryKey(store.db, org.organizationId, mgmt, { disabled: 1 }, clock.now())).toBe(
        false,
      );
      expect(await softDeleteOrdinaryKey(store.db, org.organizationId, mgmt, clock.now())).toBe(false);
    });

    it("lists newest first with the id as tiebreak, filters disabled, pages", async () => {
      const other = await createOrganization(store, clock, "Other");
      const hashes: string[] = [];
      for (let i = 0; i < 6; i++) {
        if (i % 3 === 0) clock.advance(1000);
        const k = key({
          organizationId: other.organizationId,
          workspaceId: other.workspaceId,
          now: clock.now(),
        });
        await insertKey(store.db, k);
        hashes.unshift(k.hash);
      }
      await updateOrdinaryKey(store.db, other.organizationId, hashes[1]!, { disabled: 1 }, clock.now());
      const page = (p: { includeDisabled: boolean; offset: number; limit: number }) =>
        listOrdinaryKeys(store.db, {
          organizationId: other.organizationId,
          workspaceId: other.workspaceId,
          ...p,
        }).then((rows) => rows.map((r) => r.hash));
      expect(await page({ includeDisabled: true, offset: 0, limit: 100 })).toEqual(hashes);
      expect(await page({ includeDisabled: false, offset: 0, limit: 100 })).toEqual(
        hashes.filter((_, i) => i !== 1),
      );
      expect(await page({ includeDisabled: true, offset: 2, limit: 3 })).toEqual(hashes.slice(2, 5));
    });

    it("updates only the given columns, and reports unknown keys", async () => {
      const k = key({ name: "orig", limitNano: 5n, limitReset: "daily" });
      await insertKey(store.db, k);
      clock.advance(1000);
      expect(
        await updateOrdinaryKey(store.db, org.organizationId, k.hash, { name: "new" }, clock.now()),
      ).toBe(true);
      const row = (await findOrdinaryKey(store.db, org.organizationId, k.hash))!;
      expect(row.name).toBe("new");
      expect(BigInt(row.limit_nano!)).toBe(5n);
      expect(row.limit_reset).toBe("daily");
      expect(row.updated_at).toBe(clock.now().toISOString());
      expect(row.created_at).not.toBe(row.updated_at);
      expect(
        await updateOrdinaryKey(store.db, org.organizationId, "0".repeat(64), { name: "x" }, clock.now()),
      ).toBe(false);
      // Another organization cannot touch it.
      const other = await createOrganization(store, clock, "Intruder");
      expect(
        await updateOrdinaryKey(store.db, other.organizationId, k.hash, { name: "x" }, clock.now()),
      ).toBe(false);
    });

    it("soft-deletes once and keeps the row", async () => {
      const k = key({ name: "to delete" });
      await insertKey(store.db, k);
      expect(await softDeleteOrdinaryKey(store.db, org.organizationId, k.hash, clock.now())).toBe(true);
      expect(await softDeleteOrdinaryKey(store.db, org.organizationId, k.hash, clock.now())).toBe(false);
      expect(await findKey(store.db, org.organizationId, k.hash)).toBeUndefined();
      const raw = await store.db
        .selectFrom("api_keys")
        .selectAll()
        .where("hash", "=", k.hash)
        .executeTakeFirst();
      expect(raw).toMatchObject({ name: "to delete", deleted_at: clock.now().toISOString() });
    });

    it("maps a page of keys with their usage read in one query", async () => {
      const a = key({ limitNano: 2_000_000_000n });
      const b = key({ limitNano: 2_000_000_000n, includeByokInLimit: true });
      await insertKey(store.db, a);
      await insertKey(store.db, b);
      for (const k of [a, b]) {
        await store.transaction((trx) =>
          addUsage(trx, {
            organizationId: org.organizationId,
            keyHash: k.hash,
            workspaceId: org.workspaceId,
            at: clock.now(),
            usageNano: 1_250_000_000n,
            byokNano: 500_000_000n,
          }),
        );
      }
      const rows = await Promise.all(
        [a, b].map((k) => findOrdinaryKey(store.db, org.organizationId, k.hash)),
      );
      const recs = await toKeyRecords(
        store.db,
        rows.map((r) => r!),
        clock.now(),
      );
      expect(recs.map((r) => [r.usage, r.byok_usage, r.limit_remaining])).toEqual([
        [1.25, 0.5, 0.75],
        [1.25, 0.5, 0.25],
      ]);
      expect(await toKeyRecords(store.db, [], clock.now())).toEqual([]);
    });
  });
}

describe("limitRemainingNano", () => {
  const totals = zeroTotals();
  totals.day = { usage: 10n, byok: 1n };
  totals.week = { usage: 20n, byok: 2n };
  totals.month = { usage: 30n, byok: 3n };
  totals.all = { usage: 40n, byok: 4n };
  it("takes the window of the reset period, BYOK when included, and never goes below 0", () => {
    expect(limitRemainingNano(null, "daily", true, totals)).toBeNull();
    expect(limitRemainingNano(100n, "daily", false, totals)).toBe(90n);
    expect(limitRemainingNano(100n, "daily", true, totals)).toBe(89n);
    expect(limitRemainingNano(100n, "weekly", true, totals)).toBe(78n);
    expect(limitRemainingNano(100n, "monthly", false, totals)).toBe(70n);
    expect(limitRemainingNano(100n, null, true, totals)).toBe(56n);
    expect(limitRemainingNano(43n, null, true, totals)).toBe(0n);
    expect(limitRemainingNano(0n, "daily", false, zeroTotals())).toBe(0n);
  });
});
