import type { ActivityStore } from "../../../stores/activity-store.js";
import type { Db, RecordStore } from "../../../stores/record-store.js";
import { PeriodicPass } from "../../../lib/periodic-pass.js";
import { bumpActivityVersions } from "../repos/activity-version.js";
import { claimPending, deletePending, hasPending, type PendingBatch } from "../repos/pending-repo.js";

/*
 * Generations accepted while a shared activity store (ClickHouse) was unavailable reach it later,
 * through the record store, which stays their source of truth:
 *
 * 1. Ingest (the gateway's records included) claims the ids and charges the ledger in one
 *    record-store transaction, and writes the rows to the activity store inside it. When that
 *    write fails because the activity store is unavailable, the rows are parked in
 *    `activity_pending` instead, in the same transaction: the batch is accepted, charged and
 *    offered to Broadcast all the same, so an analytics outage never stops model requests or
 *    lets one go uncharged.
 * 2. A pass writes parked batches to the activity store (which skips rows it already holds),
 *    bumps the organizations' activity versions (cached analytics answers go stale) and deletes
 *    them. A crash anywhere in between leaves them parked, and the next pass writes what is
 *    missing; nothing is counted twice.
 *
 * Passes run at start and every PENDING_PASS_INTERVAL_MS on every instance. Two never write the
 * same batch at once: in a process they take turns; across instances (PostgreSQL) a pass holds
 * its batches locked (FOR UPDATE SKIP LOCKED) until it has written and deleted them. SQLite has
 * one process, so there a pass holds no transaction while the activity store writes.
 */

/** Batches per pass transaction at most. */
export const PENDING_PASS_BATCHES = 20;
/** How often every instance looks for parked batches. */
export const PENDING_PASS_INTERVAL_MS = 5_000;

/** After the activity store holds `batches`: cached answers go stale, the table forgets them. */
async function settle(trx: Db, batches: readonly PendingBatch[]): Promise<void> {
  await bumpActivityVersions(
    trx,
    batches.map((b) => b.organizationId),
  );
  await deletePending(
    trx,
    batches.map((b) => b.seq),
  );
}

/** One page of parked batches to the activity store: how many batches, and rows, were written. */
async function writePage(
  store: RecordStore,
  activity: ActivityStore,
  limit: number,
): Promise<{ batches: number; rows: number }> {
  const write = async (trx: Db): Promise<{ batches: number; rows: number }> => {
    const batches = await claimPending(trx, store.caps, limit);
    if (batches.length === 0) return { batches: 0, rows: 0 };
    for (const b of batches) await activity.insert(b.rows, b.tags);
    // Without row locks (SQLite: one process, whose passes take turns) no transaction is held
    // while the activity store writes: one would stall every other write of the store.
    if (store.caps.supportsForUpdate) await settle(trx, batches);
    else await store.transaction((t) => settle(t, batches));
    return { batches: batches.length, rows: batches.reduce((n, b) => n + b.rows.length, 0) };
  };
  return store.caps.supportsForUpdate ? store.transaction(write) : write(store.db);
}

export interface PendingActivityOptions {
  pageBatches?: number;
  intervalMs?: number;
}

/** This process's passes from `activity_pending` to the activity store (see the top of this file). */
export class PendingActivity {
  private readonly passes: PeriodicPass;
  private readonly pageBatches: number;

  constructor(
    private readonly store: RecordStore,
    private readonly activity: ActivityStore,
    opts: PendingActivityOptions = {},
  ) {
    this.pageBatches = opts.pageBatches ?? PENDING_PASS_BATCHES;
    this.passes = new PeriodicPass(opts.intervalMs ?? PENDING_PASS_INTERVAL_MS);
  }

  /** Where a failed pass is reported (the app's logger); the batches stay parked for the next. */
  onFailure(listener: (err: unknown) => void): void {
    this.passes.onFailure(listener);
  }

  /**
   * Writes everything parked, page by page (batches another instance's pass holds are left to
   * it). Resolves to the generations written; rejects when a page fails (what was written stays).
   */
  drain(): Promise<number> {
    return this.passes.inTurn(async () => {
      if (!(await hasPending(this.store.db))) return 0;
      let total = 0;
      for (;;) {
        const page = await writePage(this.store, this.activity, this.pageBatches);
        total += page.rows;
        if (page.batches < this.pageBatches) return total;
      }
    });
  }

  /** A drain now, then one every interval until stop(); failures are reported, never thrown. */
  start(): Promise<void> {
    return this.passes.start(() => this.drain());
  }

  /** Stops the timer and waits for the pass in progress. */
  stop(): Promise<void> {
    return this.passes.stop();
  }
}
