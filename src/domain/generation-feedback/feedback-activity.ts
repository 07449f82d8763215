import type { FeedbackRow } from "../../activity/feedback-row.js";
import type { ActivityStore } from "../../stores/activity-store.js";
import type { Db, RecordStore } from "../../stores/record-store.js";
import { PeriodicPass } from "../../lib/periodic-pass.js";
import { bumpActivityVersions } from "../ingest/repos/activity-version.js";
import {
  insertGenerationFeedback,
  storedFeedbackIds,
  type GenerationFeedback,
} from "./generation-feedback-repo.js";
import {
  claimQueuedFeedback,
  deleteQueuedFeedback,
  hasQueuedFeedback,
  queueFeedbackForActivity,
  type ClaimOptions,
} from "./feedback-queue-repo.js";

/*
 * Feedback reaches analytics through the record store, which stays its source of truth:
 *
 * 1. A submission is stored (generation_feedback) and queued (feedback_activity_queue) in ONE
 *    record-store transaction (storeFeedback).
 * 2. A pass writes queued rows to the activity store (insertFeedback, which skips rows it already
 *    holds), bumps the organizations' activity versions (cached analytics answers go stale) and
 *    deletes the rows from the queue. A crash anywhere in between leaves the rows queued, and
 *    the next pass writes what is missing; nothing is counted twice.
 *
 * Passes run right after each submission (the answer waits for it: analytics sees the feedback
 * once it is answered), at start before the server serves, and every FEEDBACK_PASS_INTERVAL_MS on
 * every instance (what an instance that died left queued, and what failed while the activity
 * store was down).
 *
 * Two passes never write the same row at once: in a process they take turns; across instances
 * (PostgreSQL) a pass holds its rows locked (FOR UPDATE) until it has written and deleted them.
 * SQLite has one process and no row locks, so there a pass holds no transaction while the
 * activity store writes (one would stall every other write of the store meanwhile).
 */

/** Rows per pass transaction at most. */
export const FEEDBACK_PASS_ROWS = 500;
/** How often every instance looks for queued feedback. */
export const FEEDBACK_PASS_INTERVAL_MS = 30_000;

/** The queue row of a submission (what the activity store will hold). */
const queueRow = (feedback: GenerationFeedback, generationCreatedAtMs: number): FeedbackRow => ({
  organization_id: feedback.organizationId,
  feedback_id: feedback.id,
  generation_id: feedback.generationId,
  created_at_ms: generationCreatedAtMs,
  category: feedback.category,
  submitted_at_ms: Date.parse(feedback.createdAt),
});

/** Stores a submission and queues it for the activity store, together or not at all. */
export async function storeFeedback(
  store: RecordStore,
  feedback: GenerationFeedback,
  generationCreatedAtMs: number,
): Promise<void> {
  await store.transaction(async (trx) => {
    await insertGenerationFeedback(trx, feedback);
    await queueFeedbackForActivity(trx, queueRow(feedback, generationCreatedAtMs));
  });
}

/**
 * Stores many submissions and queues them, in one transaction; a submission whose id is already
 * stored is skipped (a re-run of `gatehouse demo`). Resolves to how many were stored.
 */
export async function storeFeedbackBatch(
  store: RecordStore,
  list: readonly { feedback: GenerationFeedback; generationCreatedAtMs: number }[],
): Promise<number> {
  if (list.length === 0) return 0;
  return store.transaction(async (trx) => {
    const held = new Set(
      await storedFeedbackIds(
        trx,
        list.map((x) => x.feedback.id),
      ),
    );
    let stored = 0;
    for (const { feedback, generationCreatedAtMs } of list) {
      if (held.has(feedback.id)) continue;
      held.add(feedback.id);
      await insertGenerationFeedback(trx, feedback);
      await queueFeedbackForActivity(trx, queueRow(feedback, generationCreatedAtMs));
      stored++;
    }
    return stored;
  });
}

/**
 * After the activity store holds `rows`: cached answers go stale, the queue forgets them. The
 * organizations' versions are bumped in one order, so two passes never lock them crosswise.
 */
async function settle(trx: Db, rows: readonly FeedbackRow[]): Promise<void> {
  await bumpActivityVersions(
    trx,
    rows.map((r) => r.organization_id),
  );
  await deleteQueuedFeedback(
    trx,
    rows.map((r) => r.feedback_id),
  );
}

/** One page of queued rows to the activity store; resolves to how many were written. */
async function writePage(store: RecordStore, activity: ActivityStore, opts: ClaimOptions): Promise<number> {
  if (!store.caps.supportsForUpdate) {
    const rows = await claimQueuedFeedback(store.db, store.caps, opts);
    if (rows.length === 0) return 0;
    await activity.insertFeedback(rows);
    await store.transaction((trx) => settle(trx, rows));
    return rows.length;
  }
  return store.transaction(async (trx) => {
    const rows = await claimQueuedFeedback(trx, store.caps, opts);
    if (rows.length === 0) return 0;
    await activity.insertFeedback(rows);
    await settle(trx, rows);
    return rows.length;
  });
}

export interface FeedbackActivityOptions {
  pageRows?: number;
  intervalMs?: number;
}

/** This process's passes from the queue to the activity store (see the top of this file). */
export class FeedbackActivity {
  private readonly passes: PeriodicPass;
  private readonly pageRows: number;

  constructor(
    private readonly store: RecordStore,
    private readonly activity: ActivityStore,
    opts: FeedbackActivityOptions = {},
  ) {
    this.pageRows = opts.pageRows ?? FEEDBACK_PASS_ROWS;
    this.passes = new PeriodicPass(opts.intervalMs ?? FEEDBACK_PASS_INTERVAL_MS);
  }

  /** Where a failed pass is reported (the app's logger); the rows stay queued for the next one. */
  onFailure(listener: (err: unknown) => void): void {
    this.passes.onFailure(listener);
  }

  /**
   * Writes one stored submission now (its answer waits for this). Never rejects: a failure is
   * reported and the row stays queued. Where another instance's pass holds the row, this waits
   * for that pass to end.
   */
  async writeNow(feedbackId: string): Promise<void> {
    try {
      await this.passes.inTurn(() =>
        writePage(this.store, this.activity, { limit: 1, ids: [feedbackId], locked: "wait" }),
      );
    } catch (err) {
      this.passes.report(err);
    }
  }

  /**
   * Writes everything queued, page by page (rows another instance's pass holds are left to it).
   * Resolves to the rows written; rejects when a page fails (what was written stays written).
   */
  drain(): Promise<number> {
    return this.passes.inTurn(async () => {
      if (!(await hasQueuedFeedback(this.store.db))) return 0;
      let total = 0;
      for (;;) {
        const n = await writePage(this.store, this.activity, { limit: this.pageRows, locked: "skip" });
        total += n;
        if (n < this.pageRows) return total;
      }
    });
  }

  /**
   * A drain now, then one every interval until stop(); failures are reported, never thrown.
   * Resolves once the first drain has ended (the server awaits it before it serves, so what an
   * earlier process left queued is counted by the first query). The timer does not keep the
   * process alive.
   */
  start(): Promise<void> {
    return this.passes.start(() => this.drain());
  }

  /** Stops the timer and waits for the pass in progress. */
  stop(): Promise<void> {
    return this.passes.stop();
  }
}
