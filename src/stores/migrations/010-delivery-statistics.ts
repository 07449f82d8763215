import { sql, type Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * Statistics of which destinations' deliveries are in which state (PostgreSQL). A Broadcast
 * claim asks for one destination's oldest due rows (`… WHERE destination_id = ? AND state =
 * 'pending' … ORDER BY id LIMIT 64`). Taking the two conditions as independent, the planner
 * reckoned that a destination with a long delivered history had thousands of pending rows spread
 * over the table, and walked the primary key in id order to find 64 of them: through every row
 * the table keeps, a down destination's backlog included (test/contract/history-plans.test.ts).
 * With the pair's most common values it knows a destination's pending rows are few, and reads
 * them through an index on destination_id. ANALYZE once here; autovacuum keeps them current.
 */
export function deliveryStatistics(caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (!caps.extendedStatistics) return;
      await sql`
        create statistics broadcast_deliveries_destination_state (mcv, dependencies)
        on destination_id, state from broadcast_deliveries`.execute(db);
      await sql`analyze broadcast_deliveries`.execute(db);
    },
  };
}
