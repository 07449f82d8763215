import type { FeedbackCategory, FeedbackRow } from "../../activity/feedback-row.js";
import type { DialectCaps } from "../../stores/dialect.js";
import type { Db } from "../../stores/record-store.js";

/*
 * `feedback_activity_queue` (migration 015): feedback submissions not yet written to the activity
 * store, each as the activity row it becomes (timestamps as ISO 8601 text, like every time
 * column of the record store). feedback-activity.ts moves them.
 */

const iso = (ms: number): string => new Date(ms).toISOString();

/** Queues a submission; call in the transaction that stores the feedback itself. */
export async function queueFeedbackForActivity(db: Db, row: FeedbackRow): Promise<void> {
  await db
    .insertInto("feedback_activity_queue")
    .values({
      feedback_id: row.feedback_id,
      organization_id: row.organization_id,
      generation_id: row.generation_id,
      generation_created_at: iso(row.created_at_ms),
      category: row.category,
      created_at: iso(row.submitted_at_ms),
    })
    .execute();
}

export interface ClaimOptions {
  /** Rows at most, oldest submissions first. */
  limit: number;
  /** Only these submissions (the one just stored); all otherwise. */
  ids?: readonly string[];
  /**
   * Where rows are locked (PostgreSQL; SQLite serialises transactions instead): skip rows another
   * transaction holds (a background pass), or wait for it to end (then a row it wrote is gone).
   */
  locked: "skip" | "wait";
}

/**
 * Queued submissions, locked for the transaction `trx` where the engine locks rows, so that two
 * instances never write the same one at once.
 */
export async function claimQueuedFeedback(
  trx: Db,
  caps: DialectCaps,
  opts: ClaimOptions,
): Promise<FeedbackRow[]> {
  let q = trx.selectFrom("feedback_activity_queue").selectAll();
  if (opts.ids) {
    if (opts.ids.length === 0) return [];
    q = q.where("feedback_id", "in", [...opts.ids]);
  }
  q = q.orderBy("created_at").orderBy("feedback_id").limit(opts.limit);
  if (caps.supportsForUpdate) q = opts.locked === "skip" ? q.forUpdate().skipLocked() : q.forUpdate();
  const rows = await q.execute();
  return rows.map((r) => ({
    organization_id: r.organization_id,
    feedback_id: r.feedback_id,
    generation_id: r.generation_id,
    created_at_ms: Date.parse(r.generation_created_at),
    // Checked when it was submitted (the route's schema).
    category: r.category as FeedbackCategory,
    submitted_at_ms: Date.parse(r.created_at),
  }));
}

/** Removes written submissions from the queue. */
export async function deleteQueuedFeedback(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .deleteFrom("feedback_activity_queue")
    .where("feedback_id", "in", [...ids])
    .execute();
}

/** Whether any submission (of any organization) waits for the activity store. */
export async function hasQueuedFeedback(db: Db): Promise<boolean> {
  const row = await db
    .selectFrom("feedback_activity_queue")
    .select("feedback_id")
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** How many of the organization's submissions wait for the activity store. */
export async function countQueuedFeedback(db: Db, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom("feedback_activity_queue")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("organization_id", "=", organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
