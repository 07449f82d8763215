import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import type { HoldPlan } from "../../src/gateway/reservations/enforcement.js";
import { MemoryReservationStore } from "../../src/gateway/reservations/memory-store.js";
import type { HoldRequest, Room } from "../../src/gateway/reservations/room.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { holdRequest, keyPolicy, monthlyBudget, workspacePolicy } from "../helpers/policies.js";

/**
 * The in-process reservation store's arithmetic: what a reserve sees as held by other requests
 * is the sum of the open holds that count toward the same key and the same workspace, however
 * many other holds are open, and never an expired one. (The end-to-end guarantees under
 * concurrency are in enforcement.test.ts.) On SQLite in a file (the committed copy: a synchronous
 * reserve) and in memory (an asynchronous ledger read).
 */

const dir = mkdtempSync(join(tmpdir(), "gatehouse-reservations-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LIMIT = 10n ** 15n;

const request = (
  id: string,
  keyHash: string,
  workspaceId: string,
  counts: { key?: boolean; workspace?: boolean } = {},
): HoldRequest => {
  const ws = { id: workspaceId, organizationId: "org" };
  return holdRequest(
    workspacePolicy(ws, { budgets: [monthlyBudget(LIMIT)] }),
    keyPolicy(ws, keyHash, { limitNano: LIMIT }),
    id,
    { countsKey: counts.key ?? true, countsWorkspace: counts.workspace ?? true },
  );
};

/** Reserves `amount` and returns what the reserve saw held by others (key, workspace). */
async function reserve(
  rs: MemoryReservationStore,
  req: HoldRequest,
  amount: bigint,
): Promise<{ key: bigint | null; workspace: bigint | null }> {
  let seen: Room | null = null;
  await rs.reserve(req, (room): HoldPlan => {
    seen = room;
    return { amountNano: amount, maxTokens: 1, capped: false };
  });
  const room = seen as Room | null;
  return { key: room?.key?.reservedNano ?? null, workspace: room?.budgets[0]?.reservedNano ?? null };
}

const stores: [string, () => Promise<RecordStore>][] = [
  ["SQLite in a file", () => openSqliteStore(join(dir, `${Math.random()}.sqlite`))],
  ["SQLite in memory", () => openSqliteStore(":memory:")],
];

for (const [name, open] of stores) {
  describe(`memory reservations (${name})`, () => {
    /** A reservation store whose holds live `ttlMs`, on a store of this kind closed when the test ends. */
    const reservations = async (ttlMs = 60_000): Promise<MemoryReservationStore> => {
      const store = await open();
      onTestFinished(() => store.close());
      return new MemoryReservationStore(store, ttlMs);
    };

    it("counts the open holds of the same key and workspace only, whatever else is open", async () => {
      const rs = await reservations();
      // 2,000 holds of 1 by seven keys (key kN in workspace w(N % 3)): k0 took 286 of them, and
      // w0's keys (k0, k3, k6) 857.
      for (let i = 0; i < 2_000; i++) {
        await reserve(rs, request(`other-${i}`, `k${i % 7}`, `w${(i % 7) % 3}`), 1n);
      }
      expect(await reserve(rs, request("a", "k0", "w0"), 1_000n)).toEqual({ key: 286n, workspace: 857n });
      expect(await reserve(rs, request("b", "k0", "w0"), 10n)).toEqual({ key: 1_286n, workspace: 1_857n });
      expect(await reserve(rs, request("c3", "k3", "w0"), 1n)).toEqual({ key: 286n, workspace: 1_867n });
      // A key of another workspace sees that workspace's holds, not w0's.
      expect(await reserve(rs, request("c", "fresh", "w9"), 5n)).toEqual({ key: 0n, workspace: 0n });
      expect(await rs.openCount()).toBe(2_004);
    });

    it("a hold that does not count toward the key (or the workspace) is not held there", async () => {
      const rs = await reservations();
      await reserve(rs, request("byok-key", "k", "w", { key: false }), 100n);
      await reserve(rs, request("byok-ws", "k", "w", { workspace: false }), 20n);
      expect(await reserve(rs, request("next", "k", "w"), 1n)).toEqual({ key: 20n, workspace: 100n });
    });

    it("a settled or released hold stops counting once its charge is in; releasing twice changes nothing", async () => {
      const rs = await reservations();
      await reserve(rs, request("r1", "k", "w"), 100n);
      await reserve(rs, request("r2", "k", "w"), 30n);
      await rs.release("r1");
      await rs.release("r1");
      expect(await reserve(rs, request("r3", "k", "w"), 1n)).toEqual({ key: 30n, workspace: 30n });
      let held: { key: bigint | null; workspace: bigint | null } | null = null;
      await rs.settle(
        "r2",
        async () => {
          // While its charge is being recorded, the hold still counts: at the charge (12), no
          // longer at the worst case it was taken for (30).
          held = await reserve(rs, request("r4", "k", "w"), 2n);
        },
        12n,
      );
      expect(held).toEqual({ key: 13n, workspace: 13n });
      await rs.release("r3");
      await rs.release("r4");
      expect(await reserve(rs, request("r5", "k", "w"), 1n)).toEqual({ key: 0n, workspace: 0n });
      expect(await rs.openCount()).toBe(1);
    });

    it("a settling hold counts its charge where the hold counts, even a charge over the worst case", async () => {
      const rs = await reservations();
      await reserve(rs, request("small", "k", "w"), 100n);
      await reserve(rs, request("byok", "k", "w", { key: false }), 50n);
      await reserve(rs, request("over", "k", "w"), 10n);
      const seen: { key: bigint | null; workspace: bigint | null }[] = [];
      let commit!: () => void;
      const committed = new Promise<void>((done) => (commit = done));
      // Three charges recorded at once, none committed yet: 100 → 4, 50 → 7 (workspace only),
      // 10 → 25 (the upstream reported more than the estimate: the hold grows, never undercounts).
      const settles = [
        rs.settle("small", () => committed, 4n),
        rs.settle("byok", () => committed, 7n),
        rs.settle("over", () => committed, 25n),
      ];
      seen.push(await reserve(rs, request("probe", "k", "w"), 1n));
      commit();
      await Promise.all(settles);
      seen.push(await reserve(rs, request("after", "k", "w"), 1n));
      expect(seen).toEqual([
        { key: 29n, workspace: 36n },
        { key: 1n, workspace: 1n }, // only "probe" is still open
      ]);
    });

    it("a hold counts in the windows of its own day: not in a narrower window after a reset, still in the wider ones", async () => {
      const rs = await reservations();
      const at = (id: string, iso: string, limitReset: "daily" | "weekly" | "monthly" | null) => ({
        ...request(id, "k", "w"),
        key: keyPolicy({ id: "w", organizationId: "org" }, "k", { limitNano: LIMIT, limitReset }),
        now: new Date(iso),
      });
      // Sunday 2026-11-29 (last week, same month), Monday the 30th, Tuesday 2026-12-01 (same week).
      await reserve(rs, at("sunday", "2026-11-29T23:59:59Z", null), 1n);
      await reserve(rs, at("monday", "2026-11-30T08:00:00Z", null), 10n);
      await reserve(rs, at("december", "2026-12-01T00:00:00Z", null), 100n);
      const monday = "2026-11-30T23:00:00Z";
      // The workspace's budget here is monthly: November's holds.
      expect(await reserve(rs, at("daily", monday, "daily"), 0n)).toEqual({ key: 10n, workspace: 11n });
      expect(await reserve(rs, at("weekly", monday, "weekly"), 0n)).toEqual({ key: 110n, workspace: 11n });
      expect(await reserve(rs, at("monthly", monday, "monthly"), 0n)).toEqual({ key: 11n, workspace: 11n });
      expect(await reserve(rs, at("lifetime", monday, null), 0n)).toEqual({ key: 111n, workspace: 11n });
      // Released, a hold leaves its own day's total.
      await rs.release("monday");
      expect(await reserve(rs, at("after", monday, "weekly"), 0n)).toEqual({ key: 100n, workspace: 1n });
    });

    it("an expired hold counts for nothing; a renewed one keeps counting", async () => {
      const rs = await reservations(150);
      await reserve(rs, request("stale", "k", "w"), 100n);
      await reserve(rs, request("live", "k", "w"), 7n);
      await new Promise((done) => setTimeout(done, 100));
      await rs.renew(["live"]);
      await new Promise((done) => setTimeout(done, 100));
      // 200 ms in: "stale" expired at 150, "live" was renewed at 100 (until 250).
      expect(await reserve(rs, request("now", "k", "w"), 1n)).toEqual({ key: 7n, workspace: 7n });
      expect(await rs.openCount()).toBe(2);
    });
  });
}
