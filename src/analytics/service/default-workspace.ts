import { activityDefaultWorkspaceId } from "../../domain/workspaces/workspace-repo.js";
import type { Db } from "../../stores/record-store.js";

/**
 * The organization's default workspace, to which legacy activity (workspace_id null) belongs; the
 * one rule lives in `activityDefaultWorkspaceId` (docs/api-notes.md, "The default workspace").
 */
export function defaultWorkspaceId(db: Db, organizationId: string): Promise<string | null> {
  return activityDefaultWorkspaceId(db, organizationId);
}
