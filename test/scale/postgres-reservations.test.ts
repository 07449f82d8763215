import { CompiledQuery, sql, type RootOperationNode } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import type { BudgetInterval } from "../../src/domain/budgets/budget-intervals.js";
import type { BudgetPolicy, KeyPolicy, WorkspacePolicy } from "../../src/domain/policy/policy.js";
import { createWorkspace } from "../../src/domain/workspaces/workspace-service.js";
import { addUsage, readKeyAndWorkspaceUsage } from "../../src/domain/usage/ledger.js";
import type { HoldPlan } from "../../src/gateway/reservations/enforcement.js";
import { holdsAndUsageQuery } from "../../src/gateway/reservations/holds-and-usage.js";
import { PostgresReservationStore } from "../../src/gateway/reservations/postgres-store.js";
import type { Room } from "../../src/gateway/reservations/room.js";
import { systemClock } from "../../src/lib/clock.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import { fixedPlan, holdRequest, keyPolicy, monthlyBudget, workspacePolicy } from "../helpers/policies.js";
import { freshPostgresDatabase, PG_SKIP_REASON, PG_URL } from "../helpers/stores.js";

/**
 * PostgreSQL's shared reservation store under contention, at the store's own level: two instances
 * (two stores, two pools, one database) reserve against one key whose lifetime limit fits exactly
 * 20 holds (and, in a second race, a workspace budget that does, over four keys), and every hold
 * is settled for its whole amount (the charge written to the ledger, in its own transaction, as a
 * generation record does). Reserves and settles interleave freely; a
 * settle takes no lock, and the store relies on the charge committing before the hold's delete.
 * Were a reserve ever to see neither the hold nor its charge, more than 20 would be admitted.
 */

const SKIP = !PG_URL;
if (SKIP) console.warn(`postgres reservations: ${PG_SKIP_REASON}`);

const HOLD = 1_000_000n;
const FITS = 20n;

class Refused extends Error {}

/**
 * A fresh database with one organization, for one test: its store, and its default workspace's
 * policy (`over` laid on it); closed and dropped when `fn` ends.
 */
async function withOrganization(
  name: string,
  over: Partial<WorkspacePolicy>,
  fn: (store: RecordStore, ws: WorkspacePolicy) => Promise<void>,
): Promise<void> {
  const db = await freshPostgresDatabase();
  const store = await openPostgresStore(db.url, 4);
  try {
    const org = await createOrganization(store, systemClock, name);
    await fn(store, workspacePolicy({ id: org.workspaceId, organizationId: org.organizationId }, over));
  } finally {
    await store.close();
    await db.drop();
  }
}

/** The store with `onQuery` shown every statement before it runs (it may throw instead). */
function withQueryHook(store: RecordStore, onQuery: (node: RootOperationNode) => void): RecordStore {
  return {
    ...store,
    db: store.db.withPlugin({
      transformQuery: (args) => {
        onQuery(args.node);
        return args.node;
      },
      transformResult: async (args) => args.result,
    }),
  };
}

/** What a race runs against: one key's lifetime limit, or a monthly workspace budget over 4 keys. */
type Target = "key limit" | "workspace budget";

describe.skipIf(SKIP)("PostgreSQL reservations: two instances, one limit, settles racing reserves", () => {
  let drop: () => Promise<void>;
  const stores: RecordStore[] = [];
  let organizationId: string;
  let defaultWorkspaceId: string;

  beforeAll(async () => {
    const db = await freshPostgresDatabase();
    drop = db.drop;
    stores.push(await openPostgresStore(db.url, 8), await openPostgresStore(db.url, 8));
    const org = await createOrganization(stores[0] as RecordStore, systemClock, "reservations");
    organizationId = org.organizationId;
    defaultWorkspaceId = org.workspaceId;
  });

  afterAll(async () => {
    for (const s of stores) await s.close();
    await drop?.();
  });

  /**
   * 24 lanes × 6 attempts over both instances, every admitted hold settled for its whole amount.
   * Against the key limit the one key is used; against the budget, lane n uses key n % 4 (none with
   * a limit), so only the workspace's sums of holds and charges can refuse.
   */
  async function race(target: Target): Promise<{ admitted: number; spent: bigint }> {
    const forKey = target === "key limit";
    const ws = forKey
      ? workspacePolicy({ id: defaultWorkspaceId, organizationId }, { isDefault: true })
      : workspacePolicy(
          {
            id: (
              await createWorkspace(
                stores[0] as RecordStore,
                systemClock,
                { organizationId, keyHash: "none" },
                { name: "Budgeted", slug: "budgeted" },
              )
            ).id,
            organizationId,
          },
          { budgets: [monthlyBudget(HOLD * FITS)] },
        );
    const keys = forKey
      ? [keyPolicy(ws, "race-key", { limitNano: HOLD * FITS })]
      : [0, 1, 2, 3].map((n) => keyPolicy(ws, `budget-key-${n}`, { id: n + 10 }));
    const instances = stores.map((s) => new PostgresReservationStore(s, 60_000));
    const decide = (room: Room): HoldPlan => {
      const scope = (forKey ? room.key : room.budgets[0]) as NonNullable<Room["key"]>;
      if (scope.limitNano - scope.spentNano - scope.reservedNano < HOLD) throw new Refused();
      return { amountNano: HOLD, maxTokens: 1, capped: false };
    };
    let admitted = 0;
    let refused = 0;
    let n = 0;
    await Promise.all(
      Array.from({ length: 24 }, async (_, lane) => {
        const store = stores[lane % 2] as RecordStore;
        const rs = instances[lane % 2] as PostgresReservationStore;
        const key = keys[lane % keys.length] as KeyPolicy;
        for (let attempt = 0; attempt < 6; attempt++) {
          const id = `race-${target}-${++n}`;
          try {
            await rs.reserve(
              // The key race inserts its holds at the amount decide gives; the budget race
              // (nothing expected: 0) has every hold corrected after decide.
              holdRequest(ws, key, id, forKey ? { expectedNano: HOLD } : {}),
              decide,
            );
          } catch (err) {
            if (!(err instanceof Refused)) throw err;
            refused++;
            continue;
          }
          admitted++;
          await rs.settle(
            id,
            () =>
              store.transaction((trx) =>
                addUsage(trx, {
                  organizationId,
                  keyHash: key.hash,
                  workspaceId: ws.id,
                  at: new Date(),
                  usageNano: HOLD,
                  byokNano: 0n,
                }),
              ),
            HOLD,
          );
        }
      }),
    );
    expect(admitted + refused).toBe(24 * 6);
    expect(await (instances[0] as PostgresReservationStore).openCount()).toBe(0);
    const totals = await readKeyAndWorkspaceUsage(
      (stores[0] as RecordStore).db,
      forKey ? (keys[0] as KeyPolicy).hash : null,
      forKey ? null : ws.id,
      new Date(),
    );
    return { admitted, spent: forKey ? totals.key.all.usage : totals.workspace.month.usage };
  }

  it.each<Target>(["key limit", "workspace budget"])(
    "%s: never admits more than the limit holds; what is settled is what was admitted",
    async (target) => {
      const { admitted, spent } = await race(target);
      expect(BigInt(admitted)).toBeLessThanOrEqual(FITS);
      expect(spent).toBe(HOLD * BigInt(admitted));
      // Refusals that counted a hold and its charge together only refuse more: most of it is used.
      expect(admitted).toBeGreaterThanOrEqual(10);
    },
    60_000,
  );
});

describe.skipIf(SKIP)("PostgreSQL reservations: the instance vacuums the holds' table it churns", () => {
  let drop: () => Promise<void>;
  let store: RecordStore;
  let organizationId: string;
  let workspaceId: string;

  beforeAll(async () => {
    const db = await freshPostgresDatabase();
    drop = db.drop;
    store = await openPostgresStore(db.url, 4);
    const org = await createOrganization(store, systemClock, "vacuum");
    organizationId = org.organizationId;
    workspaceId = org.workspaceId;
  });

  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  /** `pairs` reserves, each settled (or released, every other one), one at a time. */
  async function churn(rs: PostgresReservationStore, pairs: number, tag: string): Promise<void> {
    const ws = workspacePolicy({ id: workspaceId, organizationId }, { isDefault: true });
    const key = keyPolicy(ws, `vacuum-key-${tag}`);
    for (let i = 0; i < pairs; i++) {
      const id = `${tag}-${i}`;
      await rs.reserve(holdRequest(ws, key, id), fixedPlan(1n));
      if (i % 2 === 0) await rs.settle(id, async () => undefined, 0n);
      else await rs.release(id);
    }
    await rs.close(); // waits for a vacuum in progress
  }

  it("vacuums once per vacuumRows holds dropped, and never with 0", async () => {
    const every50 = new PostgresReservationStore(store, 60_000, { vacuumRows: 50 });
    const warnings: string[] = [];
    every50.onWarning((m) => warnings.push(m));
    await churn(every50, 120, "every50");
    // 120 dropped: a vacuum at the 50th and the 100th (one at a time, each started in the background).
    expect(every50.vacuums).toBeGreaterThanOrEqual(1);
    expect(every50.vacuums).toBeLessThanOrEqual(2);
    expect(warnings).toEqual([]);

    const never = new PostgresReservationStore(store, 60_000, { vacuumRows: 0 });
    await churn(never, 120, "never");
    expect(never.vacuums).toBe(0);
    expect(await never.openCount()).toBe(0);
  });

  it("a vacuum that fails is reported once, and the holds go on", async () => {
    // A store whose connections say no to VACUUM alone (as a database would that refused it).
    const refusing = withQueryHook(store, (node) => {
      if (node.kind === "RawNode" && /vacuum/i.test(node.sqlFragments.join(""))) {
        throw Object.assign(new Error("permission denied to vacuum"), { code: "42501" });
      }
    });
    const rs = new PostgresReservationStore(refusing, 60_000, { vacuumRows: 10 });
    const warnings: string[] = [];
    rs.onWarning((m) => warnings.push(m));
    await churn(rs, 60, "refused");
    expect(rs.vacuums).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/vacuum of gateway_reservations failed \(permission denied to vacuum\)/);
    expect(await rs.openCount()).toBe(0);
  });
});

describe.skipIf(SKIP)("PostgreSQL reservations: the hold inserted with the read", () => {
  it("holds what decide sized, expected or not; a refusal leaves no hold", async () => {
    await withOrganization("amounts", { isDefault: true }, async (store, ws) => {
      const key = keyPolicy(ws, "amounts-key");
      const rs = new PostgresReservationStore(store, 60_000);
      const reserve = (id: string, expectedNano: bigint | undefined, amountNano: bigint | null) =>
        rs.reserve(holdRequest(ws, key, id, expectedNano !== undefined ? { expectedNano } : {}), () => {
          if (amountNano === null) throw new Refused();
          return fixedPlan(amountNano)();
        });
      await reserve("as-expected", 500n, 500n);
      await reserve("capped", 500n, 120n); // the limits left less than the worst case
      await reserve("unexpected", undefined, 70n);
      await expect(reserve("refused", 500n, null)).rejects.toBeInstanceOf(Refused);
      const rows = await store.db
        .selectFrom("gateway_reservations")
        .select(["id", "amount_nano"])
        .orderBy("id")
        .execute();
      expect(rows.map((r) => [r.id, BigInt(r.amount_nano)])).toEqual([
        ["as-expected", 500n],
        ["capped", 120n],
        ["unexpected", 70n],
      ]);
    });
  });
});

describe.skipIf(SKIP)("PostgreSQL reservations: holds count in the windows of their own day", () => {
  it("a hold of another day, week or month is not held in the request's narrower windows; one without a day is held in all", async () => {
    const budget = (interval: BudgetInterval, limitNano: bigint): BudgetPolicy => ({
      id: `budget-${interval}`,
      interval,
      limitNano,
      createdAt: "",
      updatedAt: "",
    });
    const budgets = (["daily", "weekly", "monthly", "lifetime"] as const).map((i, n) =>
      budget(i, HOLD * 100n * BigInt(n + 1)),
    );
    await withOrganization("windows", { isDefault: true, budgets }, async (store, ws) => {
      const key = keyPolicy(ws, "windows-key", { limitNano: HOLD * 100n, limitReset: "daily" });
      const rs = new PostgresReservationStore(store, 60_000);
      const at = (iso: string) => ({ now: new Date(iso) });
      // Monday 2026-11-30; Sunday the 29th (last week, same month); Tuesday 2026-12-01.
      await rs.reserve(holdRequest(ws, key, "sunday", at("2026-11-29T23:59:59Z")), fixedPlan(1n));
      await rs.reserve(holdRequest(ws, key, "monday", at("2026-11-30T08:00:00Z")), fixedPlan(10n));
      await rs.reserve(holdRequest(ws, key, "december", at("2026-12-01T00:00:00Z")), fixedPlan(100n));
      // Taken by an instance that predates the column (a rolling upgrade): counted everywhere.
      await rs.reserve(holdRequest(ws, key, "old-instance"), fixedPlan(1_000n));
      await sql`update gateway_reservations set day_index = null where id = 'old-instance'`.execute(store.db);
      let seen: Room | null = null;
      await rs.reserve(holdRequest(ws, key, "probe", at("2026-11-30T23:00:00Z")), (room) => {
        seen = room;
        return fixedPlan(1n)();
      });
      const room = seen as unknown as Room;
      expect(room.key?.reservedNano).toBe(1_010n); // the key's day: Monday's and the old instance's
      expect(room.budgets.map((b) => [b.interval, b.reservedNano])).toEqual([
        ["daily", 1_010n],
        ["weekly", 1_110n], // Monday to Sunday: the week runs into December
        ["monthly", 1_011n], // November
        ["lifetime", 1_111n],
      ]);
    });
  });
});

describe.skipIf(SKIP)("PostgreSQL reservations: holds settled together are deleted together", () => {
  it("the settles of one turn (a recorder's commit) delete their holds in one statement", async () => {
    await withOrganization("drops", { isDefault: true }, async (store, ws) => {
      const key = keyPolicy(ws, "drops-key");
      let deletes = 0;
      const counting = withQueryHook(store, (node) => {
        if (node.kind === "DeleteQueryNode") deletes++;
      });
      const rs = new PostgresReservationStore(counting, 60_000);
      const ids = Array.from({ length: 12 }, (_, i) => `together-${i}`);
      for (const id of ids) await rs.reserve(holdRequest(ws, key, id), fixedPlan(5n));
      // One commit stores every charge (as the recorder's group commit does), then all settle.
      let commit!: () => void;
      const committed = new Promise<void>((r) => (commit = r));
      const settles = ids.slice(0, 10).map((id) => rs.settle(id, () => committed, 0n));
      const releases = ids.slice(10).map((id) => rs.release(id));
      commit();
      await Promise.all([...settles, ...releases]);
      expect(deletes).toBe(1);
      expect(await rs.openCount()).toBe(0);
      // Alone, a settle still goes at once.
      await rs.reserve(holdRequest(ws, key, "alone"), fixedPlan(5n));
      await rs.settle("alone", async () => undefined, 0n);
      expect(deletes).toBe(2);
      expect(await rs.openCount()).toBe(0);
    });
  });

  it("close waits for the deletes asked for and not awaited, and returns at once with none", async () => {
    await withOrganization("drops-close", { isDefault: true }, async (store, ws) => {
      const key = keyPolicy(ws, "drops-close-key");
      // Each delete's answer is held until unblocked, so close() must wait for it.
      let unblock!: () => void;
      const blocked = new Promise<void>((r) => (unblock = r));
      const deletes = new Set<unknown>();
      const slow: RecordStore = {
        ...store,
        db: store.db.withPlugin({
          transformQuery: (args) => {
            if (args.node.kind === "DeleteQueryNode") deletes.add(args.queryId);
            return args.node;
          },
          transformResult: async (args) => {
            if (deletes.has(args.queryId)) await blocked;
            return args.result;
          },
        }),
      };
      const rs = new PostgresReservationStore(slow, 60_000);
      await rs.reserve(holdRequest(ws, key, "pending-a"), fixedPlan(5n));
      await rs.reserve(holdRequest(ws, key, "pending-b"), fixedPlan(5n));
      const released = [rs.release("pending-a"), rs.release("pending-b")];
      let closed = false;
      const closing = rs.close().then(() => (closed = true));
      await new Promise((r) => setTimeout(r, 50));
      expect(closed).toBe(false); // the delete is still running
      unblock();
      await closing;
      await Promise.all(released);
      expect(await rs.openCount()).toBe(0);
      // Nothing pending: close returns without waiting for anything.
      await rs.close();
    });
  });
});

describe.skipIf(SKIP)("PostgreSQL reservations: the reserve's read after a long history", () => {
  it("looks up each current ledger window by its primary key, whatever the past windows", async () => {
    await withOrganization("plan", { budgets: [monthlyBudget(HOLD * FITS)] }, async (store, ws) => {
      const key = keyPolicy(ws, "plan-key", { limitNano: HOLD * FITS });
      // Three years of daily, weekly and monthly windows for the key and its workspace.
      await sql`
        insert into usage_counters (scope, scope_id, "window", window_index, organization_id, usage_nano, byok_nano)
        select s, case when s = 'key' then ${key.hash} else ${ws.id} end, w, i, ${ws.organizationId}, 1, 0
        from unnest(array['key', 'workspace']) s, unnest(array['day', 'week', 'month']) w,
             generate_series(1, 1100) i
        on conflict do nothing`.execute(store.db);
      await sql`analyze usage_counters`.execute(store.db);
      const now = Date.now();
      const q = holdsAndUsageQuery(store.db, holdRequest(ws, key, "p"), now, now + 60_000, HOLD);
      const plan = await store.db.executeQuery<{ "QUERY PLAN": string }>(
        CompiledQuery.raw(`EXPLAIN ${q.sql}`, [...q.parameters]),
      );
      const lines = plan.rows.map((r) => r["QUERY PLAN"]);
      // Eight index lookups (four windows of the key, four of the workspace), no scan of the table.
      expect(lines.filter((l) => /Index Scan on usage_counters_pk/.test(l))).toHaveLength(8);
      expect(lines.some((l) => /Seq Scan on usage_counters/.test(l))).toBe(false);
      // Each names the whole key, the window's index included: one row, not a walk over the past.
      const conds = lines.filter((l) => /Index Cond: .*scope_id/.test(l));
      expect(conds).toHaveLength(8);
      for (const c of conds) expect(c).toMatch(/window_index = /);
    });
  });
});
