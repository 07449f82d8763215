import { sql, type Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * Guardrails and members (docs/guardrails.md, docs/members.md):
 * - `members`: the people of an organization (`org:admin` | `org:member`), records for guardrail
 *   assignment and attribution (a key's `creator_user_id`); nobody signs in as one yet.
 * - `workspace_members`: who belongs to which workspace (`admin` | `member`). The default
 *   workspace lists every member without rows of its own.
 * - `guardrails`: an organization's guardrails. The list fields, flags and content filters are
 *   one JSON text (`rules`), read whole by the policy cache; what a query filters on has a column.
 *   A workspace's default guardrail has the id derived from the workspace's (`is_default` = 1),
 *   stored by its first write.
 * - `guardrail_key_assignments`, `guardrail_member_assignments`: at most one guardrail per key
 *   and per member (unique), assigning again replaces it.
 * - `gateway_reservations.member_id`: the member whose key took the hold, so a member's guardrail
 *   budget counts the holds of every key the member created (index `api_keys_creator` finds
 *   those keys' counters).
 * On PostgreSQL every change to the guardrail tables or members sends `guardrails:<organization>`
 * on the policy channel (migration 008's), so other instances' policy caches forget it.
 */
export function guardrailsMembers(caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("members")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        /** Lower-cased. */
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("first_name", "text")
        .addColumn("last_name", "text")
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("members_org_email")
        .on("members")
        .columns(["organization_id", "email"])
        .unique()
        .execute();

      await db.schema
        .createTable("workspace_members")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("workspace_members_workspace_user")
        .on("workspace_members")
        .columns(["workspace_id", "user_id"])
        .unique()
        .execute();
      await db.schema
        .createIndex("workspace_members_user")
        .on("workspace_members")
        .columns(["organization_id", "user_id"])
        .execute();

      await db.schema
        .createTable("guardrails")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text")
        .addColumn("is_default", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("description", "text")
        .addColumn("limit_nano", "bigint")
        .addColumn("reset_interval", "text")
        .addColumn("include_byok_in_budgets", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("rules", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("guardrails_org_created")
        .on("guardrails")
        .columns(["organization_id", "created_at", "id"])
        .execute();

      await db.schema
        .createTable("guardrail_key_assignments")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("guardrail_id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("assigned_by", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("guardrail_key_assignments_key")
        .on("guardrail_key_assignments")
        .column("key_hash")
        .unique()
        .execute();
      await db.schema
        .createIndex("guardrail_key_assignments_guardrail")
        .on("guardrail_key_assignments")
        .columns(["guardrail_id", "created_at"])
        .execute();

      await db.schema
        .createTable("guardrail_member_assignments")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("guardrail_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("assigned_by", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("guardrail_member_assignments_member")
        .on("guardrail_member_assignments")
        .columns(["organization_id", "user_id"])
        .unique()
        .execute();
      await db.schema
        .createIndex("guardrail_member_assignments_guardrail")
        .on("guardrail_member_assignments")
        .columns(["guardrail_id", "created_at"])
        .execute();

      await db.schema.alterTable("gateway_reservations").addColumn("member_id", "text").execute();
      // A member's keys: a member guardrail's budget sums their counters, a member with keys in a
      // workspace cannot leave it.
      await db.schema
        .createIndex("api_keys_creator")
        .on("api_keys")
        // Creator first: an index led by organization_id would draw the organization's other key
        // reads away from api_keys_live_org_workspace_created (test/contract/history-plans.test.ts).
        .columns(["creator_user_id", "organization_id"])
        .execute();

      if (!caps.changeNotifications) return;
      await sql`
        create or replace function gatehouse_guardrails_notify() returns trigger language plpgsql as $$
        declare
          r record;
        begin
          if tg_op = 'DELETE' then r := old; else r := new; end if;
          perform pg_notify('gatehouse_policy', 'guardrails:' || r.organization_id);
          return null;
        end $$`.execute(db);
      for (const table of [
        "guardrails",
        "guardrail_key_assignments",
        "guardrail_member_assignments",
        "members",
      ]) {
        await sql`
          create trigger ${sql.raw(`${table}_policy_notify`)}
          after insert or update or delete on ${sql.table(table)}
          for each row execute function gatehouse_guardrails_notify()`.execute(db);
      }
    },
  };
}
