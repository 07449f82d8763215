import { sql } from "kysely";
import type { Db, RecordStore } from "../../stores/record-store.js";

/**
 * Upkeep of the Broadcast queue: the destinations' statistics, pruning past retention and the
 * queue caps (releasing outbox batches is batches-repo.ts releaseBatches).
 */

const num = (v: unknown): number => Number(v);

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

/**
 * Removes delivered and dead rows past their retention, and the deliveries and stats of deleted
 * destinations (an attempt in flight when its destination was deleted records its error after
 * `discardDestinationQueue`; the next prune removes that row).
 * A success is not written per delivery: the last success of a destination is the latest
 * `finished_at_ms` of its delivered rows (delivery-status.ts), so before delivered rows are
 * pruned, their latest finish is folded into `broadcast_destination_stats.last_success_ms`.
 */
export async function pruneDeliveries(
  db: Db,
  nowMs: number,
  deliveredRetentionMs: number,
  deadRetentionMs: number,
): Promise<void> {
  // The deleted destinations' ids first, then their rows by index (a correlated EXISTS made
  // SQLite scan every retained delivery, every second).
  await db
    .deleteFrom("broadcast_deliveries")
    .where("destination_id", "in", (eb) =>
      eb
        .selectFrom("destinations")
        .select("destinations.id")
        .where("destinations.deleted_at", "is not", null),
    )
    .execute();
  await db
    .deleteFrom("broadcast_destination_stats")
    .where("destination_id", "in", (eb) =>
      eb
        .selectFrom("destinations")
        .select("destinations.id")
        .where("destinations.deleted_at", "is not", null),
    )
    .execute();
  const cutoff = nowMs - deliveredRetentionMs;
  await db
    .insertInto("broadcast_destination_stats")
    .columns(["destination_id", "last_success_ms", "cap_dropped"])
    .expression((eb) =>
      eb
        .selectFrom("broadcast_deliveries")
        .select((e) => ["destination_id", e.fn.max("finished_at_ms").as("last"), sql.lit(0).as("dropped")])
        .where("state", "=", "delivered")
        .where("finished_at_ms", "<", cutoff)
        .groupBy("destination_id"),
    )
    .onConflict((oc) =>
      oc.column("destination_id").doUpdateSet({
        last_success_ms: sql`CASE WHEN broadcast_destination_stats.last_success_ms IS NULL
          OR excluded.last_success_ms > broadcast_destination_stats.last_success_ms
          THEN excluded.last_success_ms ELSE broadcast_destination_stats.last_success_ms END`,
      }),
    )
    .execute();
  await db
    .deleteFrom("broadcast_deliveries")
    .where("state", "=", "delivered")
    .where("finished_at_ms", "<", cutoff)
    .execute();
  await db
    .deleteFrom("broadcast_deliveries")
    .where("state", "=", "dead")
    .where("finished_at_ms", "<", nowMs - deadRetentionMs)
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
      // Rows in flight (leased) are left to their claim; the next oldest go instead.
      const oldest = await store.db
        .selectFrom("broadcast_deliveries")
        .select(["id", "item_count"])
        .where("destination_id", "=", o.destination_id)
        .where("state", "=", "pending")
        .where((eb) => eb.or([eb("lease_until_ms", "is", null), eb("lease_until_ms", "<", nowMs)]))
        .orderBy("id")
        .limit(500)
        .execute();
      if (oldest.length === 0) break;
      const ids: number[] = [];
      for (const r of oldest) {
        if (excess <= 0) break;
        ids.push(num(r.id));
        excess -= num(r.item_count);
      }
      const n = await store.transaction(async (trx) => {
        // Rows leased meanwhile (another instance claimed them) are not dropped.
        const dead = await trx
          .updateTable("broadcast_deliveries")
          .set({
            state: "dead",
            finished_at_ms: nowMs,
            last_error: CAP_ERROR,
            lease_owner: null,
            lease_until_ms: null,
          })
          .where("id", "in", ids)
          .where("state", "=", "pending")
          .where((eb) => eb.or([eb("lease_until_ms", "is", null), eb("lease_until_ms", "<", nowMs)]))
          .returning("item_count")
          .execute();
        const n = dead.reduce((sum, r) => sum + num(r.item_count), 0);
        if (n === 0) return 0;
        await trx
          .insertInto("broadcast_destination_stats")
          .values({ destination_id: o.destination_id, cap_dropped: n })
          .onConflict((oc) =>
            oc
              .column("destination_id")
              .doUpdateSet({ cap_dropped: sql`broadcast_destination_stats.cap_dropped + ${n}` }),
          )
          .execute();
        return n;
      });
      dropped += n;
    }
  }
  return dropped;
}
