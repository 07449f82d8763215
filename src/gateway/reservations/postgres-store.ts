import { sql } from "kysely";
import { lockWorkspaceRow } from "../../domain/workspaces/workspace-repo.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { HoldPlan } from "./enforcement.js";
import type { ReservationStore } from "./reservation-store.js";
import { guardrailHolders, roomOf, type GuardrailTotals, type HoldRequest, type Room } from "./room.js";
import { readGuardrailHolds, readHoldsAndUsage } from "./holds-and-usage.js";
import { readKeyAndWorkspaceUsage } from "../../domain/usage/ledger.js";
import { readCreatorUsage } from "./creator-usage.js";

/** Holds deleted by one statement at most. */
const MAX_DROP_BATCH = 1_000;

export interface PostgresReservationOptions {
  /** Rows deleted or rewritten by this instance after which it vacuums the table (0: never). */
  vacuumRows?: number;
}

/**
 * Holds in a PostgreSQL table shared by every instance. A reserve runs in one transaction that
 * first locks the workspace row (every key belongs to one workspace, so this serialises the key
 * too), then inserts the hold and reads the workspace's other unexpired holds and the ledger in
 * one statement (readHoldsAndUsage), and commits. A settle records the charge first and then
 * deletes the hold (with the others settled in the same turn: drop), so a reserve sees either the
 * hold or the charge (or both), never neither; it takes no lock (see settle), so the workspace's
 * lock is held once per request, by its reserve. A crashed instance's holds stop being renewed and
 * count for nothing after their expiry; they are deleted later.
 *
 * Every request inserts a row and deletes it: the table's dead rows pile up faster than
 * autovacuum (a minute apart at best) takes them, and every reserve's sum walks them, so one
 * workspace's admissions fell from ~700 to ~400 a second within a minute (docs/performance.md).
 * So each instance vacuums the table itself once it has deleted or rewritten `vacuumRows` rows
 * (`GATEHOUSE_RESERVATION_VACUUM_ROWS`; 0 leaves it to autovacuum): a few milliseconds, in the
 * background, taking no lock that reserves or settles wait for.
 */
export class PostgresReservationStore implements ReservationStore {
  readonly kind = "postgres";
  /**
   * Per workspace, this instance's locking transactions run one at a time: the others wait in
   * memory rather than each holding a pooled connection while blocked on the row lock (a burst
   * would otherwise take the whole pool and starve everything else).
   */
  private readonly queues = new Map<string, Promise<unknown>>();

  /** Holds to delete in the next turn (drop). */
  private drops: { id: string; done: () => void; fail: (err: unknown) => void }[] = [];
  /** Delete statements running. */
  private dropsInFlight = 0;
  /** close() calls waiting for the drops asked for (and running) to end. */
  private dropWaiters: (() => void)[] = [];
  private readonly vacuumRows: number;
  /** Rows this instance deleted or rewrote since its last vacuum began. */
  private churned = 0;
  private vacuuming: Promise<void> | null = null;
  /** The last vacuum failed (its warning given). */
  private vacuumFailing = false;
  private warn: (message: string) => void = () => undefined;
  /** Vacuums run by this instance (tests and diagnostics). */
  vacuums = 0;

  constructor(
    private readonly store: RecordStore,
    private readonly ttlMs: number,
    opts: PostgresReservationOptions = {},
  ) {
    this.vacuumRows = opts.vacuumRows ?? 0;
  }

  /** Where a failed vacuum is reported (the app's logger). */
  onWarning(listener: (message: string) => void): void {
    this.warn = listener;
  }

  /** Counts rows made dead; past vacuumRows, starts a vacuum unless one is running. */
  private churn(rows: number): void {
    this.churned += rows;
    if (this.vacuumRows <= 0 || this.vacuuming || this.churned < this.vacuumRows) return;
    this.churned = 0;
    this.vacuuming = this.vacuum().finally(() => {
      this.vacuuming = null;
    });
  }

  private async vacuum(): Promise<void> {
    try {
      // SKIP_LOCKED: when another instance's vacuum of the table is running, this one is not needed.
      // A role that does not own the table is skipped by PostgreSQL with a notice, not an error.
      await sql`vacuum (skip_locked) gateway_reservations`.execute(this.store.db);
      this.vacuums++;
      this.vacuumFailing = false;
    } catch (err) {
      // Said once per run of failures (the database down fails every request anyway).
      if (!this.vacuumFailing) {
        this.warn(
          `reservations: vacuum of gateway_reservations failed (${err instanceof Error ? err.message : String(err)})`,
        );
      }
      this.vacuumFailing = true;
    }
  }

  /** Waits for the drops asked for and a vacuum in progress (before the store's pool closes). */
  async close(): Promise<void> {
    if (this.drops.length > 0 || this.dropsInFlight > 0) {
      await new Promise<void>((done) => this.dropWaiters.push(done));
    }
    await this.vacuuming;
  }

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
      const holders = guardrailHolders(req);
      // A member's keys may be in several workspaces: their holds are serialised by a lock of the
      // member's own, taken after the workspace's (always in that order: no deadlock).
      if (holders.member) {
        await sql`select pg_advisory_xact_lock(hashtextextended(${`gatehouse-member:${req.organizationId}/${req.key.creatorUserId}`}, 0))`.execute(
          trx,
        );
      }
      const nowMs = Date.now();
      const provisional = req.expectedNano ?? 0n;
      // The hold goes in with the read (its amount expected, not yet decided): nobody sees it
      // before the commit, and a refusal (decide throws) rolls it back with the transaction.
      const {
        held,
        key: keyTotals,
        workspace: wsTotals,
      } = await readHoldsAndUsage(trx, req, nowMs, nowMs + this.ttlMs, provisional);
      let gTotals: GuardrailTotals | undefined;
      if (holders.key || holders.member) {
        held.guardrail = await readGuardrailHolds(trx, req, nowMs, holders.member);
        const keyRead = req.countsKey && req.key.limitNano !== null;
        gTotals = {
          key: keyRead ? keyTotals : (await readKeyAndWorkspaceUsage(trx, req.key.hash, null, req.now)).key,
          member: holders.member
            ? await readCreatorUsage(trx, req.organizationId, req.key.creatorUserId as string, req.now)
            : keyTotals,
        };
      }
      const plan = decide(roomOf(req, keyTotals, wsTotals, held, gTotals));
      if (plan.amountNano !== provisional) {
        await trx
          .updateTable("gateway_reservations")
          .set({ amount_nano: plan.amountNano })
          .where("id", "=", req.id)
          .execute();
      }
      return plan;
    });
  }

  /** `chargedNano` is not used: the hold keeps its worst case until the charge commits (ReservationStore). */
  async settle(id: string, charge: () => Promise<void>, _chargedNano: bigint): Promise<void> {
    await charge();
    // No lock: the charge is committed before the delete starts, and a reserve reads the holds
    // and the ledger in one statement, one snapshot: one that misses this hold (the delete
    // committed first) sees the charge; one that sees the hold may see the charge too, which
    // only refuses more.
    await this.drop(id);
  }

  async release(id: string): Promise<void> {
    // No lock needed: dropping a hold only makes room, and a reserve that counted it refused more.
    await this.drop(id);
  }

  /**
   * Deletes a hold, with every other drop asked for in the same turn of the event loop: the
   * recorder commits the records of the requests finishing together in one transaction, and their
   * settles then drop their holds together, in one statement and one commit instead of one each.
   */
  private drop(id: string): Promise<void> {
    return new Promise<void>((done, fail) => {
      this.drops.push({ id, done, fail });
      if (this.drops.length === 1) setImmediate(() => void this.dropNow());
    });
  }

  private async dropNow(): Promise<void> {
    const batch = this.drops.splice(0, MAX_DROP_BATCH);
    // More than a statement takes: the rest in the next turn.
    if (this.drops.length > 0) setImmediate(() => void this.dropNow());
    this.dropsInFlight++;
    try {
      await this.store.db
        .deleteFrom("gateway_reservations")
        .where(
          "id",
          "in",
          batch.map((d) => d.id),
        )
        .execute();
      this.churn(batch.length);
      for (const d of batch) d.done();
    } catch (err) {
      for (const d of batch) d.fail(err);
    } finally {
      this.dropsInFlight--;
      if (this.drops.length === 0 && this.dropsInFlight === 0) {
        for (const done of this.dropWaiters.splice(0)) done();
      }
    }
  }

  async renew(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const [renewed] = await this.store.db
      .updateTable("gateway_reservations")
      .set({ expires_at_ms: Date.now() + this.ttlMs })
      .where("id", "in", [...ids])
      .execute();
    // Holds of crashed instances, long expired: gone (they already counted for nothing).
    const [deleted] = await this.store.db
      .deleteFrom("gateway_reservations")
      .where("expires_at_ms", "<", Date.now() - this.ttlMs)
      .execute();
    // An update leaves the row's old version dead, as a delete does.
    this.churn(Number(renewed?.numUpdatedRows ?? 0) + Number(deleted?.numDeletedRows ?? 0));
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
