import { sql, type Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/** Initial schema: organizations, workspaces, keys, budgets, destinations and the usage ledger. */
export function initial(caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("organizations")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("workspaces")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("slug", "text", (c) => c.notNull())
        .addColumn("description", "text")
        .addColumn("is_default", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("default_text_model", "text")
        .addColumn("default_image_model", "text")
        .addColumn("default_provider_sort", "text")
        .addColumn("disabled_server_tools", "text")
        .addColumn("io_logging_api_key_ids", "text")
        .addColumn("io_logging_sampling_rate", caps.floatType, (c) => c.notNull().defaultTo(1))
        .addColumn("is_data_discount_logging_enabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("is_observability_broadcast_enabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("is_observability_io_logging_enabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("include_byok_in_budgets", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_by", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("deleted_at", "text")
        .execute();
      await db.schema
        .createIndex("workspaces_org_slug")
        .on("workspaces")
        .columns(["organization_id", "slug"])
        .unique()
        .where(sql.ref("deleted_at"), "is", null)
        .execute();

      await db.schema
        .createTable("api_keys")
        .addColumn("id", caps.autoIncrementType, (c) =>
          caps.autoIncrementType === "integer" ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn("hash", "text", (c) => c.notNull().unique())
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("label", "text", (c) => c.notNull())
        .addColumn("is_management", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("disabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("limit_nano", "bigint")
        .addColumn("limit_reset", "text")
        .addColumn("include_byok_in_limit", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("creator_user_id", "text")
        .addColumn("external_user", "text")
        .addColumn("external_key_hash", "text")
        .addColumn("expires_at", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("deleted_at", "text")
        .execute();
      await db.schema
        .createIndex("api_keys_org_workspace_created")
        .on("api_keys")
        .columns(["organization_id", "workspace_id", "created_at"])
        .execute();

      await db.schema
        .createTable("budgets")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
        .addColumn("reset_interval", "text", (c) => c.notNull())
        .addColumn("limit_nano", "bigint", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addUniqueConstraint("budgets_workspace_interval", ["workspace_id", "reset_interval"])
        .execute();

      await db.schema
        .createTable("destinations")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("name", "text")
        .addColumn("enabled", "integer", (c) => c.notNull())
        .addColumn("privacy_mode", "integer", (c) => c.notNull())
        .addColumn("broadcast_generation_cost", "integer", (c) => c.notNull())
        .addColumn("broadcast_generation_identity", "integer", (c) => c.notNull())
        .addColumn("broadcast_generation_request_context", "integer", (c) => c.notNull())
        .addColumn("sampling_rate", caps.floatType, (c) => c.notNull())
        .addColumn("api_key_hashes", "text")
        .addColumn("filter_rules", "text")
        .addColumn("regions", "text", (c) => c.notNull())
        .addColumn("config_ciphertext", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("deleted_at", "text")
        .execute();
      await db.schema
        .createIndex("destinations_workspace_type")
        .on("destinations")
        .columns(["workspace_id", "type"])
        .execute();

      await db.schema
        .createTable("usage_counters")
        .addColumn("scope", "text", (c) => c.notNull())
        .addColumn("scope_id", "text", (c) => c.notNull())
        .addColumn("window", "text", (c) => c.notNull())
        .addColumn("window_index", "integer", (c) => c.notNull())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("usage_nano", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("byok_nano", "bigint", (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint("usage_counters_pk", ["scope", "scope_id", "window", "window_index"])
        .execute();
    },
  };
}
