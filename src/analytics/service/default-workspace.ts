import type { Db } from "../../stores/record-store.js";

/**
 * The organization's default workspace, to which legacy activity (workspace_id null) belongs. A
 * live default wins over a deleted one (which still owns its history); null when there was none.
 */
export async function defaultWorkspaceId(db: Db, organizationId: string): Promise<string | null> {
  const rows = await db
    .selectFrom("workspaces")
    .select(["id", "deleted_at", "created_at"])
    .where("organization_id", "=", organizationId)
    .where("is_default", "=", 1)
    .execute();
  rows.sort(
    (a, b) =>
      Number(a.deleted_at !== null) - Number(b.deleted_at !== null) ||
      a.created_at.localeCompare(b.created_at),
  );
  return rows[0]?.id ?? null;
}
