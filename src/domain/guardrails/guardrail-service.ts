import { UUID_RE, newId } from "../../lib/ids.js";
import type { Clock } from "../../lib/clock.js";
import { toBigInt } from "../../lib/money.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { GuardrailsTable } from "../../stores/schema.js";
import { notFound } from "../errors.js";
import { requireWorkspaceForField, workspaceForField } from "../workspaces/resolve-workspace.js";
import { liveWorkspaceIdFor } from "../workspaces/workspace-repo.js";
import { logicalDefaultRow, workspaceOfDefaultGuardrail } from "./default-guardrail.js";
import {
  applyGuardrailInput,
  type CatalogNames,
  type GuardrailInput,
  type GuardrailState,
} from "./guardrail-input.js";
import { EMPTY_RULES, rulesOf, toGuardrail, type GuardrailRecord } from "./guardrail-record.js";
import {
  deleteGuardrailRow,
  findGuardrailRow,
  insertGuardrailRow,
  insertGuardrailRowIfAbsent,
  listGuardrailRows,
  updateGuardrailRow,
} from "./guardrail-repo.js";
import { deleteKeyAssignmentsOfGuardrail } from "./key-assignment-repo.js";
import { deleteMemberAssignmentsOfGuardrail } from "./member-assignment-repo.js";

/**
 * Guardrails (SDK guardrails.create/list/get/update/delete; docs/guardrails.md). Every write
 * runs in one transaction; the caller forgets the organization's guardrails in the policy cache
 * once it has committed (changingGuardrails).
 */
export interface GuardrailDeps {
  store: RecordStore;
  clock: Clock;
  names: CatalogNames;
}

const EMPTY_STATE: GuardrailState = {
  name: "",
  description: null,
  limitNano: null,
  resetInterval: null,
  includeByok: false,
  rules: EMPTY_RULES,
};

const stateOf = (row: GuardrailsTable): GuardrailState => ({
  name: row.name,
  description: row.description,
  limitNano: row.limit_nano === null ? null : toBigInt(row.limit_nano),
  resetInterval: row.reset_interval as GuardrailState["resetInterval"],
  includeByok: Number(row.include_byok_in_budgets) === 1,
  rules: rulesOf(row),
});

const columnsOf = (s: GuardrailState, now: string) => ({
  name: s.name,
  description: s.description,
  limit_nano: s.limitNano,
  reset_interval: s.resetInterval,
  include_byok_in_budgets: s.includeByok ? 1 : 0,
  rules: JSON.stringify(s.rules),
  updated_at: now,
});

/** A guardrail id as given in a path: lower-cased; anything that is not a UUID names none (404). */
export function guardrailIdOf(id: string): string {
  if (!UUID_RE.test(id)) throw notFound("Guardrail");
  return id.toLowerCase();
}

export async function createGuardrail(
  d: GuardrailDeps,
  organizationId: string,
  input: GuardrailInput,
): Promise<GuardrailRecord> {
  const state = applyGuardrailInput(EMPTY_STATE, input, d.names, true);
  const now = d.clock.now().toISOString();
  return d.store.transaction(async (trx) => {
    // Shared lock: a concurrent deletion of the workspace cannot miss the new guardrail.
    const workspaceId = await requireWorkspaceForField(
      trx,
      d.store.caps,
      organizationId,
      input.workspace_id,
      "share",
    );
    const row: GuardrailsTable = {
      id: newId(),
      organization_id: organizationId,
      workspace_id: workspaceId,
      is_default: 0,
      created_at: now,
      ...columnsOf(state, now),
    };
    await insertGuardrailRow(trx, row);
    return toGuardrail(row);
  });
}

/** The stored guardrail, or a workspace's default guardrail before its first write; 404 otherwise. */
export async function getGuardrail(
  d: GuardrailDeps,
  organizationId: string,
  id: string,
): Promise<GuardrailRecord> {
  const gid = guardrailIdOf(id);
  const row = await findGuardrailRow(d.store.db, organizationId, gid);
  if (row) return toGuardrail(row);
  const ws = await workspaceOfDefaultGuardrail(d.store.db, organizationId, gid);
  if (!ws) throw notFound("Guardrail");
  return toGuardrail(logicalDefaultRow(ws));
}

/** Stored guardrails only: a workspace's default guardrail is listed once its first write stored it. */
export async function listGuardrails(
  d: GuardrailDeps,
  organizationId: string,
  q: { offset?: number | null; limit?: number; workspace_id?: string },
): Promise<{ data: GuardrailRecord[]; total_count: number }> {
  const workspaceId =
    q.workspace_id === undefined
      ? null
      : await workspaceForField(d.store.db, d.store.caps, organizationId, q.workspace_id);
  const { rows, total } = await listGuardrailRows(d.store.db, {
    organizationId,
    workspaceId,
    offset: q.offset ?? 0,
    limit: q.limit ?? 50,
  });
  return { data: rows.map(toGuardrail), total_count: total };
}

/**
 * Applies the body (collections replaced whole). A workspace's default guardrail is stored by its
 * first update: its empty row is inserted (unless a concurrent update did), then locked and
 * updated like any other, so two first writes never overwrite each other's fields.
 */
export async function updateGuardrail(
  d: GuardrailDeps,
  organizationId: string,
  id: string,
  input: GuardrailInput,
): Promise<GuardrailRecord> {
  const gid = guardrailIdOf(id);
  const lock = d.store.caps.supportsForUpdate ? "update" : "none";
  const now = d.clock.now().toISOString();
  return d.store.transaction(async (trx) => {
    let row = await findGuardrailRow(trx, organizationId, gid, lock);
    if (!row) {
      const ws = await workspaceOfDefaultGuardrail(trx, organizationId, gid);
      // Shared lock on the workspace: a concurrent deletion waits, then deletes this row too.
      if (
        !ws ||
        !(await liveWorkspaceIdFor(trx, organizationId, ws.id, lock === "none" ? "none" : "share"))
      ) {
        throw notFound("Guardrail");
      }
      await insertGuardrailRowIfAbsent(trx, logicalDefaultRow(ws));
      row = (await findGuardrailRow(trx, organizationId, gid, lock))!;
    }
    const state = applyGuardrailInput(stateOf(row), input, d.names, false);
    const columns = columnsOf(state, now);
    await updateGuardrailRow(trx, organizationId, gid, columns);
    return toGuardrail({ ...row, ...columns });
  });
}

/**
 * Deletes a guardrail and its key and member assignments in one transaction (the row first, so a
 * concurrent assignment, which holds it shared, has committed before its assignments are
 * removed). A workspace's default guardrail returns to its logical, empty state; deleting one not
 * yet stored changes nothing and succeeds.
 */
export async function deleteGuardrail(
  d: GuardrailDeps,
  organizationId: string,
  id: string,
): Promise<{ deleted: true }> {
  const gid = guardrailIdOf(id);
  await d.store.transaction(async (trx) => {
    if (!(await deleteGuardrailRow(trx, organizationId, gid))) {
      if (!(await workspaceOfDefaultGuardrail(trx, organizationId, gid))) throw notFound("Guardrail");
      return;
    }
    await deleteKeyAssignmentsOfGuardrail(trx, gid);
    await deleteMemberAssignmentsOfGuardrail(trx, gid);
  });
  return { deleted: true };
}
