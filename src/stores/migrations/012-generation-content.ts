import type { Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * Content logging and feedback (docs/content-logging.md):
 * - `generation_content`: the prompt and completion of a served generation whose workspace turned
 *   on IO logging, sealed whole (SecretBox, AES-256-GCM, with the organization and id as
 *   associated data), for GET /generation/content. Rows older than the retention
 *   (GATEHOUSE_CONTENT_RETENTION_DAYS) are swept, by `created_at` (its index).
 * - `generation_feedback`: what callers of POST /generation/feedback said about a generation, one
 *   row a submission (a generation may have several).
 */
export function generationContent(_caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("generation_content")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("content_ciphertext", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("generation_content_pk", ["organization_id", "id"])
        .execute();
      await db.schema
        .createIndex("generation_content_created_at")
        .on("generation_content")
        .column("created_at")
        .execute();

      await db.schema
        .createTable("generation_feedback")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("generation_id", "text", (c) => c.notNull())
        .addColumn("category", "text", (c) => c.notNull())
        .addColumn("comment", "text")
        /** The management key that submitted it. */
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("generation_feedback_generation")
        .on("generation_feedback")
        .columns(["organization_id", "generation_id"])
        .execute();
    },
  };
}
