import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addUsage, readUsage } from "../../src/domain/usage/ledger.js";
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
  });
}
