import type { Db } from "../../stores/record-store.js";
import type { GuardrailsTable } from "../../stores/schema.js";
import { defaultGuardrailId } from "../workspaces/workspace-record.js";
import {
  findLiveWorkspace,
  workspacesOfOrganization,
  type WorkspaceRow,
} from "../workspaces/workspace-repo.js";
import { EMPTY_RULES } from "./guardrail-record.js";

/**
 * A workspace's default guardrail (docs/guardrails.md "The workspace default guardrail"): its id
 * is derived from the workspace's (defaultGuardrailId), it exists logically from the start, and it
 * is stored by its first PATCH.
 */

export const defaultGuardrailName = (workspaceId: string) => `Workspace ${workspaceId} Default`;

/** The live workspace of the organization whose default guardrail has this id, if any. */
export async function workspaceOfDefaultGuardrail(
  db: Db,
  organizationId: string,
  guardrailId: string,
): Promise<WorkspaceRow | undefined> {
  const all = await workspacesOfOrganization(db, organizationId);
  const ws = all.find((w) => w.deleted_at === null && defaultGuardrailId(w.id) === guardrailId);
  return ws ? findLiveWorkspace(db, organizationId, "id", ws.id, false) : undefined;
}

/** The default guardrail as it is before its first write: no rules, dated from its workspace. */
export function logicalDefaultRow(ws: WorkspaceRow): GuardrailsTable {
  return {
    id: defaultGuardrailId(ws.id),
    organization_id: ws.organization_id,
    workspace_id: ws.id,
    is_default: 1,
    name: defaultGuardrailName(ws.id),
    description: null,
    limit_nano: null,
    reset_interval: null,
    include_byok_in_budgets: 0,
    rules: JSON.stringify(EMPTY_RULES),
    created_at: ws.created_at,
    updated_at: ws.created_at,
  };
}
