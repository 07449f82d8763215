import type { Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * Activity ingest: which generation ids each organization has accepted (the idempotency record,
 * written in the transaction that adds the generation to the usage ledger), the latest labels of
 * apps and users, and a per-organization activity version that analytics caches compare against.
 */
export function activityIngest(_caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("generations_seen")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("id", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("generations_seen_pk", ["organization_id", "id"])
        .execute();

      await db.schema
        .createTable("app_labels")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("app_id", "bigint", (c) => c.notNull())
        .addColumn("title", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("app_labels_pk", ["organization_id", "app_id"])
        .execute();

      await db.schema
        .createTable("user_labels")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("name", "text")
        .addColumn("email", "text")
        .addPrimaryKeyConstraint("user_labels_pk", ["organization_id", "user_id"])
        .execute();

      await db.schema
        .createTable("activity_versions")
        .addColumn("organization_id", "text", (c) => c.primaryKey())
        .addColumn("version", "bigint", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
