import type { Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * `gateway_reservations.day_index`: the UTC day (dayIndex) of the hold's request, where its charge
 * will land. A hold counts against the windows of its own day only, so a request that began before
 * a reset and is still in flight after it holds nothing in the new day, week or month
 * (src/gateway/reservations/holds-and-usage.ts). Null (a hold taken by an instance that predates
 * the column, during a rolling upgrade) counts in every window, as every hold did before.
 */
export function reservationDay(_caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable("gateway_reservations").addColumn("day_index", "bigint").execute();
    },
  };
}
