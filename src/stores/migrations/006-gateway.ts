import type { Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * The gateway's tables:
 * - `gateway_reservations`: open holds of worst-case cost against a key's limit and its
 *   workspace's budgets, shared by every instance on PostgreSQL (src/gateway/reservations/). A
 *   hold past `expires_at` counts for nothing; in-flight requests push their expiry forward.
 * - `gateway_generations`: what the gateway knows of a generation it served beyond the analytics
 *   record (upstream id, session, time to first token, status), for GET /generation. No prompt or
 *   completion text.
 * - `byok_keys`: an organization's own provider credentials, encrypted whole (SecretBox, the id
 *   as associated data).
 */
export function gatewayTables(_caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("gateway_reservations")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("amount_nano", "bigint", (c) => c.notNull())
        .addColumn("counts_key", "integer", (c) => c.notNull())
        .addColumn("counts_workspace", "integer", (c) => c.notNull())
        .addColumn("expires_at_ms", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("gateway_reservations_workspace")
        .on("gateway_reservations")
        .columns(["workspace_id", "expires_at_ms"])
        .execute();

      await db.schema
        .createTable("gateway_generations")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        /** The generation's GET /generation fields other than the analytics record's, as JSON. */
        .addColumn("detail", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("gateway_generations_pk", ["organization_id", "id"])
        .execute();

      await db.schema
        .createTable("byok_keys")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("name", "text")
        .addColumn("label", "text", (c) => c.notNull())
        .addColumn("key_ciphertext", "text", (c) => c.notNull())
        .addColumn("disabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("is_fallback", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("is_required", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("is_byok_only", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("declared_zdr", "integer")
        .addColumn("sort_order", "integer", (c) => c.notNull().defaultTo(0))
        /** JSON arrays of strings, or null (= no restriction). */
        .addColumn("allowed_models", "text")
        .addColumn("allowed_user_ids", "text")
        .addColumn("allowed_api_key_hashes", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("byok_keys_org_workspace")
        .on("byok_keys")
        .columns(["organization_id", "workspace_id", "provider"])
        .execute();
    },
  };
}
