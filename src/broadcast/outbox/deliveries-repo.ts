import { sql } from "kysely";
import type { Db, RecordStore } from "../../stores/record-store.js";

/** A claimed delivery row (leased to this worker). */
export interface ClaimedDelivery {
  id: number;
  batchSeq: number;
  ids: string[];
  attempts: number;
  createdAtMs: number;
}

const num = (v: unknown): number => Number(v);

/**
 * Destinations with deliveries due now and not leased, whose destination is live and enabled
 * (disabling pauses at once: its rows are simply not claimed).
 */
export async function dueDestinations(db: Db, nowMs: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom("broadcast_deliveries as d")
    .innerJoin("destinations as x", "x.id", "d.destination_id")
    .select("d.destination_id")
    .where("d.state", "=", "pending")
    .where("d.next_attempt_ms", "<=", nowMs)
    .where((eb) => eb.or([eb("d.lease_until_ms", "is", null), eb("d.lease_until_ms", "<", nowMs)]))
    .where("x.enabled", "=", 1)
    .where("x.deleted_at", "is", null)
    .groupBy("d.destination_id")
    .limit(limit)
    .execute();
  return rows.map((r) => r.destination_id);
}

/**
 * Leases due rows of one destination, oldest first, up to `maxItems` generations (at least one
 * row). On PostgreSQL the rows are locked with SKIP LOCKED while the lease is written, so two
 * instances never lease the same row; the lease then keeps it theirs until `leaseMs` passes.
 */
export async function claimDeliveries(
  store: RecordStore,
  destinationId: string,
  owner: string,
  nowMs: number,
  leaseMs: number,
  maxItems: number,
): Promise<ClaimedDelivery[]> {
  return store.transaction(async (trx) => {
    let q = trx
      .selectFrom("broadcast_deliveries")
      .select(["id", "batch_seq", "ids", "item_count", "attempts", "created_at_ms"])
      .where("destination_id", "=", destinationId)
      .where("state", "=", "pending")
      .where("next_attempt_ms", "<=", nowMs)
      .where((eb) => eb.or([eb("lease_until_ms", "is", null), eb("lease_until_ms", "<", nowMs)]))
      .orderBy("id")
      .limit(64);
    if (store.caps.supportsForUpdate) q = q.forUpdate().skipLocked();
    const rows = await q.execute();
    const taken: ClaimedDelivery[] = [];
    let items = 0;
    for (const r of rows) {
      const n = num(r.item_count);
      if (taken.length > 0 && items + n > maxItems) break;
      items += n;
      taken.push({
        id: num(r.id),
        batchSeq: num(r.batch_seq),
        ids: JSON.parse(r.ids) as string[],
        attempts: num(r.attempts),
        createdAtMs: num(r.created_at_ms),
      });
    }
    if (taken.length === 0) return [];
    await trx
      .updateTable("broadcast_deliveries")
      .set({ lease_owner: owner, lease_until_ms: nowMs + leaseMs })
      .where(
        "id",
        "in",
        taken.map((t) => t.id),
      )
      .execute();
    return taken;
  });
}

/** Marks leased rows delivered (only while this worker still holds their lease). */
export async function markDelivered(
  db: Db,
  ids: readonly number[],
  owner: string,
  nowMs: number,
): Promise<number> {
  const r = await db
    .updateTable("broadcast_deliveries")
    .set((eb) => ({
      state: "delivered",
      attempts: eb("attempts", "+", 1),
      finished_at_ms: nowMs,
      lease_owner: null,
      lease_until_ms: null,
      last_error: null,
    }))
    .where("id", "in", ids)
    .where("lease_owner", "=", owner)
    .where("state", "=", "pending")
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** A failed attempt: retried at `nextAttemptMs`, or dead-lettered when `dead`. */
export async function markFailed(
  db: Db,
  id: number,
  owner: string,
  nowMs: number,
  error: string,
  dead: boolean,
  nextAttemptMs: number,
): Promise<void> {
  await db
    .updateTable("broadcast_deliveries")
    .set((eb) => ({
      state: dead ? "dead" : "pending",
      attempts: eb("attempts", "+", 1),
      finished_at_ms: dead ? nowMs : null,
      next_attempt_ms: dead ? nowMs : nextAttemptMs,
      lease_owner: null,
      lease_until_ms: null,
      last_error: error,
    }))
    .where("id", "=", id)
    .where("lease_owner", "=", owner)
    .where("state", "=", "pending")
    .execute();
}

/** Gives leased rows back untouched (the destination was paused or deleted while claimed). */
export async function releaseLease(db: Db, ids: readonly number[], owner: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable("broadcast_deliveries")
    .set({ lease_owner: null, lease_until_ms: null })
    .where("id", "in", ids)
    .where("lease_owner", "=", owner)
    .execute();
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

export async function recordSuccess(db: Db, destinationId: string, nowMs: number): Promise<void> {
  await db
    .insertInto("broadcast_destination_stats")
    .values({ destination_id: destinationId, last_success_ms: nowMs, cap_dropped: 0 })
    .onConflict((oc) => oc.column("destination_id").doUpdateSet({ last_success_ms: nowMs }))
    .execute();
}

export async function recordError(
  db: Db,
  destinationId: string,
  nowMs: number,
  error: string,
): Promise<void> {
  await db
    .insertInto("broadcast_destination_stats")
    .values({ destination_id: destinationId, last_error: error, last_error_ms: nowMs, cap_dropped: 0 })
    .onConflict((oc) => oc.column("destination_id").doUpdateSet({ last_error: error, last_error_ms: nowMs }))
    .execute();
}

/** Discards a destination's queue (the destination was deleted). */
export async function discardDestinationQueue(db: Db, destinationId: string): Promise<void> {
  await db.deleteFrom("broadcast_deliveries").where("destination_id", "=", destinationId).execute();
  await db.deleteFrom("broadcast_destination_stats").where("destination_id", "=", destinationId).execute();
}

/** Removes delivered and dead rows past their retention, and deliveries of deleted destinations. */
export async function pruneDeliveries(
  db: Db,
  nowMs: number,
  deliveredRetentionMs: number,
  deadRetentionMs: number,
): Promise<void> {
  await db
    .deleteFrom("broadcast_deliveries")
    .where("state", "=", "delivered")
    .where("finished_at_ms", "<", nowMs - deliveredRetentionMs)
    .execute();
  await db
    .deleteFrom("broadcast_deliveries")
    .where("state", "=", "dead")
    .where("finished_at_ms", "<", nowMs - deadRetentionMs)
    .execute();
  await db
    .deleteFrom("broadcast_deliveries")
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom("destinations")
          .select("destinations.id")
          .whereRef("destinations.id", "=", "broadcast_deliveries.destination_id")
          .where("destinations.deleted_at", "is not", null),
      ),
    )
    .execute();
}

export const CAP_ERROR = "dropped: the destination's queue passed its cap (BROADCAST_QUEUE_CAP)";

/**
 * Bounded storage: for each destination whose pending generations exceed `cap`, the oldest
 * pending rows are dead-lettered (CAP_ERROR) until it is back under the cap; the number of
 * generations dropped is added to its stats. Resolves to the generations dropped.
 */
export async function enforceCaps(store: RecordStore, cap: number, nowMs: number): Promise<number> {
  const over = await store.db
    .selectFrom("broadcast_deliveries")
    .select(["destination_id", (eb) => eb.fn.sum<number>("item_count").as("n")])
    .where("state", "=", "pending")
    .groupBy("destination_id")
    .having((eb) => eb.fn.sum("item_count"), ">", cap)
    .execute();
  let dropped = 0;
  for (const o of over) {
    let excess = num(o.n) - cap;
    while (excess > 0) {
      const oldest = await store.db
        .selectFrom("broadcast_deliveries")
        .select(["id", "item_count"])
        .where("destination_id", "=", o.destination_id)
        .where("state", "=", "pending")
        .orderBy("id")
        .limit(500)
        .execute();
      if (oldest.length === 0) break;
      const ids: number[] = [];
      let n = 0;
      for (const r of oldest) {
        if (excess <= 0) break;
        ids.push(num(r.id));
        excess -= num(r.item_count);
        n += num(r.item_count);
      }
      await store.transaction(async (trx) => {
        await trx
          .updateTable("broadcast_deliveries")
          .set({
            state: "dead",
            finished_at_ms: nowMs,
            last_error: CAP_ERROR,
            lease_owner: null,
            lease_until_ms: null,
          })
          .where("id", "in", ids)
          .execute();
        await trx
          .insertInto("broadcast_destination_stats")
          .values({ destination_id: o.destination_id, cap_dropped: n })
          .onConflict((oc) =>
            oc
              .column("destination_id")
              .doUpdateSet({ cap_dropped: sql`broadcast_destination_stats.cap_dropped + ${n}` }),
          )
          .execute();
      });
      dropped += n;
    }
  }
  return dropped;
}
