import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CompiledQuery } from "kysely";
import {
  addUsage,
  addUsageTally,
  keyAndWorkspaceUsageQuery,
  readKeyAndWorkspaceUsage,
  readUsage,
  UsageTally,
} from "../../src/domain/usage/ledger.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`usage ledger on ${f.name}`, () => {
    let store: Awaited<ReturnType<typeof f.open>>;
    beforeAll(async () => {
      store = await f.open();
    });
    afterAll(() => store?.dispose());

    const entry = (at: string, usageNano: bigint, byokNano = 0n) => ({
      organizationId: "org",
      keyHash: "k".repeat(64),
      workspaceId: "ws",
      at: new Date(at),
      usageNano,
      byokNano,
    });

    it("sums exactly per window and starts new windows from zero", async () => {
      // Sunday 2026-11-22, then Monday 2026-11-23: same month, new day and new ISO week.
      await store.transaction((trx) => addUsage(trx, entry("2026-11-22T23:59:59.999Z", 1n, 5n)));
      await store.transaction((trx) =>
        addUsage(trx, entry("2026-11-22T10:00:00Z", 9_000_000_000_000_000_00n)),
      );
      await store.transaction((trx) => addUsage(trx, entry("2026-11-23T00:00:00Z", 2n)));

      const sunday = (
        await readUsage(store.db, "key", ["k".repeat(64)], new Date("2026-11-22T12:00:00Z"))
      ).get("k".repeat(64))!;
      expect(sunday.day.usage).toBe(900_000_000_000_000_001n);
      expect(sunday.day.byok).toBe(5n);
      expect(sunday.week.usage).toBe(900_000_000_000_000_001n);

      const monday = await readUsage(
        store.db,
        "workspace",
        ["ws", "other"],
        new Date("2026-11-23T08:00:00Z"),
      );
      expect(monday.get("ws")!.day.usage).toBe(2n);
      expect(monday.get("ws")!.week.usage).toBe(2n);
      expect(monday.get("ws")!.month.usage).toBe(900_000_000_000_000_003n);
      expect(monday.get("ws")!.all.usage).toBe(900_000_000_000_000_003n);
      expect(monday.get("other")!.all.usage).toBe(0n);

      const december = (
        await readUsage(store.db, "key", ["k".repeat(64)], new Date("2026-12-01T00:00:00Z"))
      ).get("k".repeat(64))!;
      expect(december.month.usage).toBe(0n);
      expect(december.all.byok).toBe(5n);
    });
    it("reads only the current windows of a key and a workspace with a long history, and of many ids at once", async () => {
      // 400 days of history for one key and its workspace, and one day of spend for 1,200 keys
      // (more than one statement's worth of ids).
      const tally = new UsageTally();
      const today = Date.parse("2026-11-24T12:00:00Z");
      for (let d = 0; d < 400; d++)
        tally.add("org", "h".repeat(64), "ws-long", today - d * 86_400_000, 1n, 0n);
      const many = Array.from({ length: 1200 }, (_, i) => `many-${String(i).padStart(4, "0")}`);
      many.forEach((id, i) => tally.add("org", id, "ws-many", today, BigInt(i + 1), 0n));
      await store.transaction((trx) => addUsageTally(trx, tally, store.caps));

      const now = new Date(today);
      const both = await readKeyAndWorkspaceUsage(store.db, "h".repeat(64), "ws-long", now);
      // 2026-11-24 is a Tuesday: the week holds Monday and Tuesday; November holds 24 days.
      for (const t of [both.key, both.workspace]) {
        expect(t.day.usage).toBe(1n);
        expect(t.week.usage).toBe(2n);
        expect(t.month.usage).toBe(24n);
        expect(t.all.usage).toBe(400n);
      }
      const keyOnly = await readKeyAndWorkspaceUsage(store.db, "h".repeat(64), null, now);
      expect(keyOnly.key.month.usage).toBe(24n);
      expect(keyOnly.workspace.all.usage).toBe(0n);

      const read = await readUsage(store.db, "key", [...many, "never-used"], now);
      expect(read.size).toBe(1201);
      expect(read.get("many-0000")!.day.usage).toBe(1n);
      expect(read.get("many-0700")!.all.usage).toBe(701n);
      expect(read.get("many-1199")!.month.usage).toBe(1200n);
      expect(read.get("never-used")!.all.usage).toBe(0n);
      expect(await readUsage(store.db, "key", [], now)).toEqual(new Map());
    });
  });
}

describe("the reservation's ledger statement on SQLite", () => {
  it("looks each current window up by its whole primary key: a long history is not walked", async () => {
    const store = await openSqliteStore(":memory:");
    try {
      const q = keyAndWorkspaceUsageQuery(store.db, "h".repeat(64), "ws", new Date());
      const plan = await store.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`EXPLAIN QUERY PLAN ${q.sql}`, [...q.parameters]),
      );
      const searches = plan.rows.map((r) => r.detail).filter((d) => d.startsWith("SEARCH"));
      expect(searches).toHaveLength(8);
      for (const d of searches) expect(d).toMatch(/window=\? AND window_index=\?\)$/);
    } finally {
      await store.close();
    }
  });
});
