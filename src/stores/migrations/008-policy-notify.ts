import { sql, type Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * Change notifications for the policy cache (src/domain/policy/): every committed insert, update
 * or delete on api_keys, workspaces or budgets sends NOTIFY gatehouse_policy with `key:<hash>` or
 * `workspace:<id>`, whoever made it (any instance, a CLI command, an operator's SQL). PostgreSQL
 * delivers notifications at commit, and only then; identical payloads of one transaction are sent
 * once. SQLite has no such mechanism and gets nothing (one server process owns the file).
 */
export function policyNotify(caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (!caps.changeNotifications) return;
      await sql`
        create or replace function gatehouse_policy_notify() returns trigger language plpgsql as $$
        declare
          r record;
        begin
          if tg_op = 'DELETE' then r := old; else r := new; end if;
          if tg_table_name = 'api_keys' then
            perform pg_notify('gatehouse_policy', 'key:' || r.hash);
          elsif tg_table_name = 'workspaces' then
            perform pg_notify('gatehouse_policy', 'workspace:' || r.id);
          else
            perform pg_notify('gatehouse_policy', 'workspace:' || r.workspace_id);
          end if;
          return null;
        end $$`.execute(db);
      for (const table of ["api_keys", "workspaces", "budgets"]) {
        await sql`
          create trigger ${sql.raw(`${table}_policy_notify`)}
          after insert or update or delete on ${sql.table(table)}
          for each row execute function gatehouse_policy_notify()`.execute(db);
      }
    },
  };
}
