import { sql, type Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * `organizations.credit_line_nano`: the organization's credit line in nano-USD, what
 * `GET /credits` answers as `total_credits` (null: not set, docs/api-notes.md "Credits").
 *
 * `usage_counters_org_all` (partial: the all-time rows only, one per key and per workspace): an
 * organization's lifetime usage is the sum of its keys' all-time rows, read without scanning every
 * day, week and month of every organization. The indexed columns never change once a row exists,
 * so the ledger's upserts (which only add to the amounts) leave the index alone.
 */
export function creditLine(_caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable("organizations").addColumn("credit_line_nano", "bigint").execute();
      await db.schema
        .createIndex("usage_counters_org_all")
        .on("usage_counters")
        .columns(["organization_id", "scope"])
        .where(sql.ref("window"), "=", sql.lit("all"))
        .execute();
    },
  };
}
