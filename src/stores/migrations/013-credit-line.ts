import type { Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * `organizations.credit_line_nano`: the organization's credit line in nano-USD, what
 * `GET /credits` answers as `total_credits` (null: not set, docs/api-notes.md "Credits").
 *
 * (An organization's lifetime usage is read by primary key, one workspace's all-time row each:
 * a partial index for it was preferred by PostgreSQL over the primary key for a reservation's
 * lookup of an all-time window, test/scale/postgres-reservations.test.ts.)
 */
export function creditLine(_caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable("organizations").addColumn("credit_line_nano", "bigint").execute();
    },
  };
}
