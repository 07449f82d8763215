import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Repositories own their tables: only key-repo.ts touches `api_keys`, only workspace-repo.ts
 * `workspaces`, and so on for each table in OWNERS (migrations create them). Everyone else calls a named repository function,
 * so a change to a table's rules (soft delete, the default workspace) has one place to go.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const OWNERS: Record<string, string> = {
  api_keys: "src/domain/keys/key-repo.ts",
  workspaces: "src/domain/workspaces/workspace-repo.ts",
  organizations: "src/domain/organizations/organization-repo.ts",
  byok_keys: "src/domain/byok/byok-repo.ts",
  gateway_generations: "src/domain/generation-details/generation-details-repo.ts",
  broadcast_batches: "src/broadcast/outbox/batches-repo.ts",
  generation_content: "src/domain/generation-content/generation-content-repo.ts",
  generation_feedback: "src/domain/generation-feedback/generation-feedback-repo.ts",
  feedback_activity_queue: "src/domain/generation-feedback/feedback-queue-repo.ts",
  activity_pending: "src/domain/ingest/repos/pending-repo.ts",
  guardrails: "src/domain/guardrails/guardrail-repo.ts",
  guardrail_key_assignments: "src/domain/guardrails/key-assignment-repo.ts",
  guardrail_member_assignments: "src/domain/guardrails/member-assignment-repo.ts",
  members: "src/domain/members/member-repo.ts",
  workspace_members: "src/domain/members/workspace-member-repo.ts",
};
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|mts|js|mjs)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Kysely builders on the table (aliases included) and raw SQL naming it after FROM/JOIN/UPDATE/INTO. */
function reachesInto(source: string, table: string): boolean {
  const builder = new RegExp(
    `\\b(selectFrom|updateTable|insertInto|deleteFrom|replaceInto|mergeInto|innerJoin|leftJoin|rightJoin|fullJoin|crossJoin)\\(\\s*\\[?\\s*["'\`]${table}(\\s+as\\s+\\w+)?["'\`]`,
  );
  const raw = new RegExp(`\\b(from|join|update|into)\\s+"?${table}"?\\b(?!\\.)`, "i");
  const sqlTemplates = source.match(/sql(<[^>]*>)?`[^`]*`/g) ?? [];
  return builder.test(source) || sqlTemplates.some((t) => raw.test(t));
}

describe("repositories own their tables", () => {
  it("the scanner recognises each way of reaching in", () => {
    expect(reachesInto('db.selectFrom("api_keys").selectAll()', "api_keys")).toBe(true);
    expect(reachesInto('db.updateTable("workspaces as w")', "workspaces")).toBe(true);
    expect(reachesInto('q.innerJoin("workspaces", "w.id", "k.workspace_id")', "workspaces")).toBe(true);
    expect(reachesInto("sql`SELECT id FROM workspaces WHERE id = ${id} FOR UPDATE`", "workspaces")).toBe(
      true,
    );
    expect(reachesInto('import { workspaces } from "./workspaces.js"', "workspaces")).toBe(false);
  });

  it("no file outside the owning repository (and migrations) has SQL on an owned table", () => {
    const offenders: string[] = [];
    for (const file of files(join(ROOT, "src"))) {
      const rel = relative(ROOT, file).split("\\").join("/");
      if (rel.startsWith("src/stores/migrations/")) continue;
      const source = readFileSync(file, "utf8");
      for (const [table, owner] of Object.entries(OWNERS)) {
        if (rel !== owner && reachesInto(source, table)) offenders.push(`${rel} (${table})`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
