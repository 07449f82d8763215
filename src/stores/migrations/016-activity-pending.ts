import type { Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * `activity_pending`: generations accepted (ids claimed, ledger charged) while a shared activity
 * store (ClickHouse) could not take them. A batch's rows are parked here, in the transaction that
 * accepts it, when the activity store is unavailable, and written by a later pass
 * (src/domain/ingest/pipeline/pending-activity.ts), which deletes them in the transaction that
 * has written them. Empty while the activity store is up.
 */
export function activityPending(caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("activity_pending")
        .addColumn("seq", caps.autoIncrementType, (c) =>
          caps.autoIncrementType === "integer" ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("row_count", "integer", (c) => c.notNull())
        /** The rows and their classification tags, as JSON (money as decimal strings). */
        .addColumn("payload", "text", (c) => c.notNull())
        /** When the batch was parked (ISO 8601). */
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("activity_pending_org")
        .on("activity_pending")
        .columns(["organization_id", "seq"])
        .execute();
    },
  };
}
