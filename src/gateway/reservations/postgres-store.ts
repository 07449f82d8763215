import { sql } from "kysely";
import { lockWorkspaceRow } from "../../domain/workspaces/workspace-repo.js";
import {
  currentWindowIndexes,
  currentWindowsMatch,
  totalsOf,
  type KeyAndWorkspaceTotals,
  type UsageRow,
} from "../../domain/usage/ledger.js";
import { toBigInt } from "../../lib/money.js";
import type { Db, RecordStore } from "../../stores/record-store.js";
import type { HoldPlan } from "../enforcement.js";
import type { ReservationStore } from "./reservation-store.js";
import { roomOf, type Held, type HoldRequest, type Room } from "./room.js";
import { QueryTemplate } from "../../stores/query-template.js";

/**
 * Holds in a PostgreSQL table shared by every instance. A reserve runs in one transaction that
 * first locks the workspace row (every key belongs to one workspace, so this serialises the key
 * too), then sums the workspace's unexpired holds, reads the ledger and inserts the hold. A
 * settle records the charge first and then deletes the hold, so a reserve sees either the hold
 * or the charge (or both), never neither; it takes no lock (see settle), so the workspace's lock
 * is held once per request, by its reserve. A crashed instance's holds stop being renewed and
 * count for nothing after their expiry; they are deleted later.
 */
export class PostgresReservationStore implements ReservationStore {
  readonly kind = "postgres";
  /**
   * Per workspace, this instance's locking transactions run one at a time: the others wait in
   * memory rather than each holding a pooled connection while blocked on the row lock (a burst
   * would otherwise take the whole pool and starve everything else).
   */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: RecordStore,
    private readonly ttlMs: number,
  ) {}

  private serial<T>(workspaceId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(workspaceId) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(workspaceId, tail);
    void tail.then(() => {
      if (this.queues.get(workspaceId) === tail) this.queues.delete(workspaceId);
    });
    return run;
  }

  async reserve(req: HoldRequest, decide: (room: Room) => HoldPlan): Promise<HoldPlan> {
    return this.serial(req.workspace.id, () => this.reserveNow(req, decide));
  }

  private async reserveNow(req: HoldRequest, decide: (room: Room) => HoldPlan): Promise<HoldPlan> {
    return this.store.transaction(async (trx) => {
      await lockWorkspaceRow(trx, req.workspace.id);
      const nowMs = Date.now();
      const { held, key: keyTotals, workspace: wsTotals } = await readHoldsAndUsage(trx, req, nowMs);
      const plan = decide(roomOf(req, keyTotals, wsTotals, held));
      await trx
        .insertInto("gateway_reservations")
        .values({
          id: req.id,
          organization_id: req.organizationId,
          key_hash: req.key.hash,
          workspace_id: req.workspace.id,
          amount_nano: plan.amountNano,
          counts_key: req.countsKey ? 1 : 0,
          counts_workspace: req.countsWorkspace ? 1 : 0,
          expires_at_ms: nowMs + this.ttlMs,
        })
        .execute();
      return plan;
    });
  }

  async settle(id: string, charge: () => Promise<void>): Promise<void> {
    await charge();
    // No lock: the charge is committed before the delete starts, and a reserve reads the holds
    // before the ledger, each statement at a later snapshot (READ COMMITTED). A reserve whose
    // read of the holds misses this one (the delete committed first) therefore sees the charge
    // in its ledger read; one that sees the hold may see the charge too, which only refuses more.
    await this.store.db.deleteFrom("gateway_reservations").where("id", "=", id).execute();
  }

  async release(id: string): Promise<void> {
    // No lock needed: dropping a hold only makes room, and a reserve that counted it refused more.
    await this.store.db.deleteFrom("gateway_reservations").where("id", "=", id).execute();
  }

  async renew(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.store.db
      .updateTable("gateway_reservations")
      .set({ expires_at_ms: Date.now() + this.ttlMs })
      .where("id", "in", [...ids])
      .execute();
    // Holds of crashed instances, long expired: gone (they already counted for nothing).
    await this.store.db
      .deleteFrom("gateway_reservations")
      .where("expires_at_ms", "<", Date.now() - this.ttlMs)
      .execute();
  }

  async openCount(): Promise<number> {
    const r = await this.store.db
      .selectFrom("gateway_reservations")
      .select(sql<string>`count(*)`.as("n"))
      .where("expires_at_ms", ">", Date.now())
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
}

/**
 * The workspace's unexpired holds (summed for the workspace and for the key) and the key's and
 * workspace's current ledger windows, in ONE statement, so one snapshot: a settle commits its
 * charge before it deletes its hold, so any snapshot holds the hold, the charge, or both (which
 * only refuses more), never neither. One round trip of the five a reserve takes (begin, lock,
 * this, insert, commit). The holds' one-row aggregate is left-joined to the counters, so a
 * key and workspace with no spend yet still give one row (its counter columns null). Compiled
 * once per shape (which ledger scopes are read: "key", "workspace", "both", "none").
 */
const holdsAndUsage = new QueryTemplate(
  (
    db: Db,
    shape,
    workspaceId: string,
    keyHash: string,
    nowMs: number,
    day: number,
    week: number,
    month: number,
    all: number,
  ) => {
    const holds = db
      .selectFrom("gateway_reservations")
      .select([
        sql<string>`coalesce(sum(case when counts_workspace = 1 then amount_nano else 0 end), 0)`.as(
          "held_ws",
        ),
        sql<string>`coalesce(sum(case when counts_key = 1 and key_hash = ${keyHash} then amount_nano else 0 end), 0)`.as(
          "held_key",
        ),
      ])
      .where("workspace_id", "=", workspaceId)
      .where("expires_at_ms", ">", nowMs);
    const indexes = { day, week, month, all };
    const ledgerKey = shape === "key" || shape === "both" ? keyHash : null;
    const ledgerWorkspace = shape === "workspace" || shape === "both" ? workspaceId : null;
    return db
      .selectFrom(holds.as("h"))
      .leftJoin("usage_counters as u", (join) =>
        join.on((eb) =>
          shape === "none"
            ? sql<boolean>`false` // the holds' row alone
            : currentWindowsMatch(eb, "u", ledgerKey, ledgerWorkspace, indexes),
        ),
      )
      .select(["h.held_ws", "h.held_key", "u.scope", "u.window", "u.usage_nano", "u.byok_nano"])
      .compile();
  },
);

async function readHoldsAndUsage(
  trx: Db,
  req: HoldRequest,
  nowMs: number,
): Promise<KeyAndWorkspaceTotals & { held: Held }> {
  const readKey = req.countsKey && req.key.limitNano !== null;
  const readWorkspace = req.countsWorkspace && req.workspace.budgets.length > 0;
  const shape = readKey ? (readWorkspace ? "both" : "key") : readWorkspace ? "workspace" : "none";
  const { day, week, month, all } = currentWindowIndexes(req.now);
  const { rows } = await holdsAndUsage.execute(
    trx,
    shape,
    req.workspace.id,
    req.key.hash,
    nowMs,
    day,
    week,
    month,
    all,
  );
  const first = rows[0];
  const counters = rows.filter((r): r is typeof r & UsageRow => r.scope !== null);
  return {
    ...totalsOf(counters),
    held: { key: toBigInt(first?.held_key ?? 0), workspace: toBigInt(first?.held_ws ?? 0) },
  };
}
