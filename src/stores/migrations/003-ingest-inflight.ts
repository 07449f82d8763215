import type { Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * In-flight ingest batches of a single-writer activity store (embedded DuckDB): a row is committed
 * before the batch's activity rows are, and deleted in the record-store transaction that accepts
 * the batch. A row that outlives its batch (a crash or a failed commit in between) names the ids
 * whose activity rows may lack their record-store acceptance; recovery deletes those rows before
 * the next batch is written. Replaced before any release by the ingest buffer (004); dropped by 005.
 */
export function ingestInflight(_caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("ingest_inflight")
        .addColumn("token", "text", (c) => c.primaryKey())
        .addColumn("owner", "text", (c) => c.notNull())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("min_ms", "bigint", (c) => c.notNull())
        .addColumn("max_ms", "bigint", (c) => c.notNull())
        .addColumn("ids", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("ingest_inflight_owner").on("ingest_inflight").column("owner").execute();
    },
  };
}
