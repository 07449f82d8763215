import type { Db } from "../../stores/record-store.js";

/** An outbox batch to write: accepted generations offered to destinations. */
export interface NewOutboxBatch {
  organizationId: string;
  createdAtMs: number;
  /** The batch's rows as ingest column texts (column-texts.ts payloadOf). */
  payload: string;
  /** JSON object: generation id → LiveContext; null when none. */
  contexts: string | null;
  /** The destinations it is offered to (enabled at acceptance; a replay's one). */
  destinationIds: readonly string[];
}

/** A batch still to fan out, as stored. */
export interface WaitingOutboxBatch {
  seq: number | string | bigint;
  organization_id: string;
  payload: string;
  contexts: string | null;
  /** JSON array of destination ids. */
  destination_ids: string;
  created_at_ms: number | string | bigint;
}

/** Writes one outbox batch, not yet fanned out. */
export async function insertOutboxBatch(db: Db, b: NewOutboxBatch): Promise<void> {
  await db
    .insertInto("broadcast_batches")
    .values({
      organization_id: b.organizationId,
      created_at_ms: b.createdAtMs,
      payload: b.payload,
      contexts: b.contexts,
      destination_ids: JSON.stringify(b.destinationIds),
      fanned_out: 0,
    })
    .execute();
}

/**
 * The oldest batches still to fan out, at most `max`; `lock` takes them with FOR UPDATE SKIP
 * LOCKED (only where the store supports it), so that several instances take different ones.
 */
export function waitingOutboxBatches(db: Db, max: number, lock: boolean): Promise<WaitingOutboxBatch[]> {
  let q = db
    .selectFrom("broadcast_batches")
    .select(["seq", "organization_id", "payload", "contexts", "destination_ids", "created_at_ms"])
    .where("fanned_out", "=", 0)
    .orderBy("seq")
    .limit(max);
  if (lock) q = q.forUpdate().skipLocked();
  return q.execute();
}

/** Deletes batches (nobody selected from them). */
export async function deleteOutboxBatches(db: Db, seqs: readonly number[]): Promise<void> {
  if (seqs.length > 0) await db.deleteFrom("broadcast_batches").where("seq", "in", seqs).execute();
}

/** Marks batches as fanned out (their deliveries are written; they stay for their content). */
export async function markOutboxBatchesFannedOut(db: Db, seqs: readonly number[]): Promise<void> {
  if (seqs.length > 0) {
    await db.updateTable("broadcast_batches").set({ fanned_out: 1 }).where("seq", "in", seqs).execute();
  }
}

/**
 * How many batches wait to be fanned out, and the acceptance time of the oldest (null when none).
 * Both from the `(fanned_out, seq)` index: the oldest is the lowest seq (batches are numbered as
 * accepted), so neither statement reads a fanned-out row or a payload.
 */
export async function waitingOutboxSummary(
  db: Db,
): Promise<{ batches: number; oldestCreatedAtMs: number | null }> {
  const waiting = db.selectFrom("broadcast_batches").where("fanned_out", "=", 0);
  const count = await waiting.select((eb) => eb.fn.countAll<number | string>().as("n")).executeTakeFirst();
  const oldest = await waiting.select("created_at_ms").orderBy("seq").limit(1).executeTakeFirst();
  return {
    batches: Number(count?.n ?? 0),
    oldestCreatedAtMs: oldest ? Number(oldest.created_at_ms) : null,
  };
}

/** A batch's stored payload and contexts (column texts and JSON), for delivery. */
export interface StoredOutboxBatch {
  seq: number;
  payload: string;
  contexts: string | null;
}

/** The stored payloads of these batches (those still in the outbox). */
export async function outboxBatchPayloads(db: Db, seqs: readonly number[]): Promise<StoredOutboxBatch[]> {
  if (seqs.length === 0) return [];
  const rows = await db
    .selectFrom("broadcast_batches")
    .select(["seq", "payload", "contexts"])
    .where("seq", "in", seqs)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), payload: r.payload, contexts: r.contexts }));
}

/** Deletes outbox batches (and so their content) that no pending delivery needs any more. */
export async function releaseBatches(db: Db, seqs?: readonly number[]): Promise<void> {
  let q = db
    .deleteFrom("broadcast_batches")
    .where("fanned_out", "=", 1)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("broadcast_deliveries")
            .select("broadcast_deliveries.id")
            .whereRef("broadcast_deliveries.batch_seq", "=", "broadcast_batches.seq")
            .where("broadcast_deliveries.state", "=", "pending"),
        ),
      ),
    );
  if (seqs !== undefined) {
    if (seqs.length === 0) return;
    q = q.where("seq", "in", seqs);
  }
  await q.execute();
}
