import { deleteByokOfWorkspace } from "../byok/byok-repo.js";
import { softDeleteDestinationsOfWorkspace } from "../destinations/destination-repo.js";
import { invalid } from "../errors.js";
import { deleteGuardrailRow } from "../guardrails/guardrail-repo.js";
import { deleteKeyAssignments } from "../guardrails/key-assignment-repo.js";
import { deleteMembershipsOfWorkspace } from "../members/workspace-member-repo.js";
import {
  countActiveKeysOfWorkspace,
  liveKeyHashesOfWorkspace,
  softDeleteKeysOfWorkspace,
} from "../keys/key-repo.js";
import type { Clock } from "../../lib/clock.js";
import type { RecordStore } from "../../stores/record-store.js";
import { resolveWorkspace } from "./resolve-workspace.js";
import { defaultGuardrailId } from "./workspace-record.js";
import { softDeleteWorkspace } from "./workspace-repo.js";

/**
 * Deletes a workspace, in one transaction that holds the workspace row:
 * - refused (400) while it has active keys (not deleted and not disabled), saying how many;
 * - the default workspace needs `confirmDefault` (400 otherwise); afterwards the organization has
 *   no default workspace (see requireDefaultWorkspace);
 * - its budgets, its provider keys (BYOK) and its memberships are removed; its destinations and
 *   its remaining (disabled) keys are soft-deleted and disabled, and their guardrail assignments
 *   removed; its default guardrail is deleted; the workspace itself is soft-deleted, which frees
 *   its slug.
 */
export async function deleteWorkspace(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  ref: string,
  confirmDefault: boolean,
): Promise<void> {
  await store.transaction(async (trx) => {
    const ws = await resolveWorkspace(trx, organizationId, ref, { forUpdate: store.caps.supportsForUpdate });
    if (Number(ws.is_default) === 1 && !confirmDefault) {
      throw invalid("confirm_default_workspace_deletion: must be true to delete the default workspace");
    }
    const n = await countActiveKeysOfWorkspace(trx, ws.id);
    if (n > 0) {
      throw invalid(
        `Workspace has ${n} active API key${n === 1 ? "" : "s"}; disable or delete ${n === 1 ? "it" : "them"} before deleting the workspace`,
        { active_key_count: n },
      );
    }
    const now = clock.now();
    const at = now.toISOString();
    await trx.deleteFrom("budgets").where("workspace_id", "=", ws.id).execute();
    await softDeleteDestinationsOfWorkspace(trx, ws.id, at);
    // Its provider keys (BYOK) go: nothing can use them any more, and a secret kept for a
    // workspace that no longer exists is one more to leak.
    await deleteByokOfWorkspace(trx, ws.id);
    // Its default guardrail goes (a new workspace never has this id), and so do the guardrail
    // assignments of its remaining keys; other guardrails placed here stay, with their assignments.
    await deleteGuardrailRow(trx, organizationId, defaultGuardrailId(ws.id));
    await deleteKeyAssignments(trx, await liveKeyHashesOfWorkspace(trx, ws.id));
    await deleteMembershipsOfWorkspace(trx, ws.id);
    await softDeleteKeysOfWorkspace(trx, ws.id, now);
    await softDeleteWorkspace(trx, ws.id, now);
  });
}
