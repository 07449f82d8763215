import { sql, type Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * `feedback_activity_queue`: feedback submissions not yet written to the activity store, where
 * analytics counts them (docs/content-logging.md "Counting it"). A submission's row is written in
 * the transaction that stores the feedback, and deleted in the transaction that has written it
 * to the activity store (src/domain/generation-feedback/feedback-activity.ts), so a crash between
 * the two leaves it here for the next pass. It carries what the activity row needs, the
 * generation's time included, so a pass reads no other table.
 *
 * Feedback stored before this migration is queued by it: the first start writes it.
 */
export function feedbackActivity(_caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("feedback_activity_queue")
        .addColumn("feedback_id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("generation_id", "text", (c) => c.notNull())
        /** The generation's created_at (ISO 8601): analytics counts the feedback at that time. */
        .addColumn("generation_created_at", "text", (c) => c.notNull())
        .addColumn("category", "text", (c) => c.notNull())
        /** When the feedback was submitted (ISO 8601). */
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      // Every submission so far is on a generation the gateway served (POST /generation/feedback
      // refuses any other id), so each has its details row and its time.
      await sql`
        INSERT INTO feedback_activity_queue
          (feedback_id, organization_id, generation_id, generation_created_at, category, created_at)
        SELECT f.id, f.organization_id, f.generation_id, g.created_at, f.category, f.created_at
        FROM generation_feedback f
        JOIN gateway_generations g ON g.organization_id = f.organization_id AND g.id = f.generation_id
      `.execute(db);
    },
  };
}
