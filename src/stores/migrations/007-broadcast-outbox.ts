import type { ColumnDefinitionBuilder, Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * The Broadcast outbox (docs/broadcast.md "Delivery"):
 * - broadcast_batches: one row per accepted ingest batch that some enabled destination of its
 *   organization may take, written in the transaction that accepts the batch. It holds the
 *   batch's rows (the ingest payload, column texts) and, separately, the served content
 *   (LiveContext JSON by generation id), and the destinations enabled when it was accepted
 *   (or the one a replay names). A fan-out step turns it into deliveries; the row is
 *   deleted once no pending delivery needs it.
 * - broadcast_deliveries: one row per (destination, batch) with the generation ids the
 *   destination selected, its state (pending | delivered | dead), attempts, next attempt time,
 *   lease and last error. Delivered rows are pruned.
 * - broadcast_destination_stats: last success, last error and cap drops per destination.
 * Times are milliseconds since the epoch (integers compare fast in both engines).
 */
export function broadcastOutbox(caps: DialectCaps) {
  const serial = caps.autoIncrementType;
  const pk = (c: ColumnDefinitionBuilder) =>
    serial === "integer" ? c.primaryKey().autoIncrement() : c.primaryKey();
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("broadcast_batches")
        .addColumn("seq", serial, pk)
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("created_at_ms", "bigint", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("contexts", "text")
        .addColumn("destination_ids", "text", (c) => c.notNull())
        .addColumn("fanned_out", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex("broadcast_batches_fanout")
        .on("broadcast_batches")
        .columns(["fanned_out", "seq"])
        .execute();
      await db.schema
        .createTable("broadcast_deliveries")
        .addColumn("id", serial, pk)
        .addColumn("destination_id", "text", (c) => c.notNull())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("batch_seq", "bigint", (c) => c.notNull())
        .addColumn("ids", "text", (c) => c.notNull())
        .addColumn("item_count", "integer", (c) => c.notNull())
        .addColumn("min_created_ms", "bigint", (c) => c.notNull())
        .addColumn("max_created_ms", "bigint", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at_ms", "bigint", (c) => c.notNull())
        .addColumn("next_attempt_ms", "bigint", (c) => c.notNull())
        .addColumn("lease_owner", "text")
        .addColumn("lease_until_ms", "bigint")
        .addColumn("last_error", "text")
        .addColumn("finished_at_ms", "bigint")
        .execute();
      await db.schema
        .createIndex("broadcast_deliveries_due")
        .on("broadcast_deliveries")
        .columns(["destination_id", "state", "next_attempt_ms"])
        .execute();
      await db.schema
        .createIndex("broadcast_deliveries_batch")
        .on("broadcast_deliveries")
        .columns(["batch_seq"])
        .execute();
      await db.schema
        .createIndex("broadcast_deliveries_finished")
        .on("broadcast_deliveries")
        .columns(["state", "finished_at_ms"])
        .execute();
      await db.schema
        .createTable("broadcast_destination_stats")
        .addColumn("destination_id", "text", (c) => c.primaryKey())
        .addColumn("last_success_ms", "bigint")
        .addColumn("last_error", "text")
        .addColumn("last_error_ms", "bigint")
        .addColumn("cap_dropped", "bigint", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
