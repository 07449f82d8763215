import type { Db } from "../../stores/record-store.js";
import type { DialectCaps } from "../../stores/dialect.js";
import { invalid } from "../errors.js";
import { findDefaultWorkspace } from "../workspaces/workspace-repo.js";

/**
 * The workspace a destination request addresses: `workspace_id` when given (a live workspace of
 * the organization), otherwise the organization's default workspace. An unknown, deleted or
 * foreign workspace is 400 `workspace_id: ...` (it is a body/query field, not a path identifier).
 * With `lock`, the workspace row is locked (FOR UPDATE where supported) so that concurrent creates
 * in one workspace serialise on it.
 */
export async function resolveWorkspace(
  db: Db,
  caps: DialectCaps,
  organizationId: string,
  workspaceId: string | undefined,
  lock = false,
): Promise<string> {
  let id = workspaceId;
  if (id === undefined) {
    const def = await findDefaultWorkspace(db, organizationId);
    if (!def) throw invalid("workspace_id: is required (the organization has no default workspace)");
    id = def.id;
  }
  let q = db
    .selectFrom("workspaces")
    .select("id")
    .where("id", "=", id)
    .where("organization_id", "=", organizationId)
    .where("deleted_at", "is", null);
  if (lock && caps.supportsForUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) throw invalid(`workspace_id: no workspace ${id} in this organization`);
  return row.id;
}
