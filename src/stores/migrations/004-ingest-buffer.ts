import type { Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * Accepted ingest batches not yet written to a single-writer activity store (embedded DuckDB): a
 * row is added in the record-store transaction that accepts the batch, and deleted once the
 * batch's rows are in the activity store (src/domain/ingest/pipeline/ingest-buffer.ts). The rows
 * themselves are in the store's ingest log, under `token` (src/stores/segment-log.ts). `seq` is
 * never reused (AUTOINCREMENT / bigserial): the activity store remembers applied sequence numbers.
 */
export function ingestBuffer(caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("ingest_buffer")
        .addColumn("seq", caps.autoIncrementType, (c) =>
          caps.autoIncrementType === "integer" ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn("owner", "text", (c) => c.notNull())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("row_count", "integer", (c) => c.notNull())
        .addColumn("token", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("ingest_buffer_owner")
        .on("ingest_buffer")
        .columns(["owner", "seq"])
        .execute();
    },
  };
}
