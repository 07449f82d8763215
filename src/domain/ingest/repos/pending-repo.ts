import type { ActivityRow, ClassificationRow } from "../../../activity/activity-row.js";
import { activityRowOf } from "../../../stores/activity-row-of.js";
import type { DialectCaps } from "../../../stores/dialect.js";
import type { Db } from "../../../stores/record-store.js";

/*
 * `activity_pending` (migration 016): batches accepted while a shared activity store (ClickHouse)
 * could not take them, each as its rows and tags in JSON (money, bigint in a row, as a decimal
 * string; read back through the same decoder as the activity store's own rows).
 * pipeline/pending-activity.ts writes them on.
 */

/** A parked batch, read back. */
export interface PendingBatch {
  seq: number;
  organizationId: string;
  rows: ActivityRow[];
  tags: ClassificationRow[];
}

const bigintAsText = (_key: string, v: unknown): unknown => (typeof v === "bigint" ? v.toString() : v);

/** Parks a batch's new rows; call in the transaction that accepts them. */
export async function parkPending(
  db: Db,
  organizationId: string,
  rows: readonly ActivityRow[],
  tags: readonly ClassificationRow[],
  nowMs: number,
): Promise<void> {
  await db
    .insertInto("activity_pending")
    .values({
      organization_id: organizationId,
      row_count: rows.length,
      payload: JSON.stringify({ rows, tags }, bigintAsText),
      created_at: new Date(nowMs).toISOString(),
    })
    .execute();
}

/**
 * The oldest parked batches, up to `limit`, locked for the transaction `trx` where the engine
 * locks rows (rows another pass holds are skipped), so two instances never write one at once.
 */
export async function claimPending(trx: Db, caps: DialectCaps, limit: number): Promise<PendingBatch[]> {
  let q = trx
    .selectFrom("activity_pending")
    .select(["seq", "organization_id", "payload"])
    .orderBy("seq")
    .limit(limit);
  if (caps.supportsForUpdate) q = q.forUpdate().skipLocked();
  const found = await q.execute();
  return found.map((r) => {
    const parsed = JSON.parse(r.payload) as { rows: Record<string, unknown>[]; tags: ClassificationRow[] };
    return {
      seq: Number(r.seq),
      organizationId: r.organization_id,
      rows: parsed.rows.map(activityRowOf),
      tags: parsed.tags,
    };
  });
}

/** Removes written batches. */
export async function deletePending(db: Db, seqs: readonly number[]): Promise<void> {
  if (seqs.length === 0) return;
  await db
    .deleteFrom("activity_pending")
    .where("seq", "in", [...seqs])
    .execute();
}

/** Whether any batch waits for the activity store. */
export async function hasPending(db: Db): Promise<boolean> {
  const row = await db.selectFrom("activity_pending").select("seq").limit(1).executeTakeFirst();
  return row !== undefined;
}

/** How many of the organization's generations wait for the activity store. */
export async function countPendingRows(db: Db, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom("activity_pending")
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("row_count"), eb.lit(0)).as("n"))
    .where("organization_id", "=", organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
