import { conflict, invalid } from "../errors.js";
import { keyCreatorUserId } from "../keys/key-repo.js";
import type { Clock } from "../../lib/clock.js";
import type { RecordStore } from "../../stores/record-store.js";
import { isUniqueViolation } from "../../stores/store-errors.js";
import { resolveWorkspace } from "./resolve-workspace.js";
import { toWorkspaceRecord, type WorkspaceRecord } from "./workspace-record.js";
import {
  findWorkspaceById,
  insertWorkspace,
  listWorkspaceRows,
  slugInUse,
  updateWorkspaceColumns,
  type WorkspaceColumns,
} from "./workspace-repo.js";
import type { WorkspaceInput } from "./workspace-settings.js";

const slugTaken = (slug: string) => conflict(`slug: a workspace with slug '${slug}' already exists`);

/** Rules JSON Schema cannot state; throws 400 naming the field. */
function checkInput(input: WorkspaceInput): void {
  if (input.name !== undefined && input.name.trim() === "") throw invalid("name: must not be blank");
}

/** Wire settings → columns. Only the fields present in the input appear in the result. */
function toColumns(input: WorkspaceInput): WorkspaceColumns {
  const c: WorkspaceColumns = {};
  if (input.name !== undefined) c.name = input.name;
  if (input.slug !== undefined) c.slug = input.slug;
  if (input.description !== undefined) c.description = input.description;
  if (input.default_text_model !== undefined) c.default_text_model = input.default_text_model;
  if (input.default_image_model !== undefined) c.default_image_model = input.default_image_model;
  if (input.default_provider_sort !== undefined) c.default_provider_sort = input.default_provider_sort;
  if (input.disabled_server_tools !== undefined) {
    const tools = [...new Set(input.disabled_server_tools ?? [])];
    // [] and null both clear the list; it is stored (and returned) as null.
    c.disabled_server_tools = tools.length === 0 ? null : JSON.stringify(tools);
  }
  if (input.io_logging_api_key_ids !== undefined) {
    const ids = input.io_logging_api_key_ids;
    c.io_logging_api_key_ids = ids === null ? null : JSON.stringify([...new Set(ids)]);
  }
  if (input.io_logging_sampling_rate !== undefined)
    c.io_logging_sampling_rate = input.io_logging_sampling_rate;
  const bool = (b: boolean) => (b ? 1 : 0);
  if (input.is_data_discount_logging_enabled !== undefined) {
    c.is_data_discount_logging_enabled = bool(input.is_data_discount_logging_enabled);
  }
  if (input.is_observability_broadcast_enabled !== undefined) {
    c.is_observability_broadcast_enabled = bool(input.is_observability_broadcast_enabled);
  }
  if (input.is_observability_io_logging_enabled !== undefined) {
    c.is_observability_io_logging_enabled = bool(input.is_observability_io_logging_enabled);
  }
  return c;
}

/**
 * Creates a workspace; a slug already used by a live workspace of the organization is 409.
 * `created_by` is the creator user id of the calling management key (null when it has none).
 */
export async function createWorkspace(
  store: RecordStore,
  clock: Clock,
  caller: { organizationId: string; keyHash: string },
  input: WorkspaceInput & { name: string; slug: string },
): Promise<WorkspaceRecord> {
  checkInput(input);
  const { organizationId } = caller;
  try {
    return await store.transaction(async (trx) => {
      const createdBy = await keyCreatorUserId(trx, caller.keyHash);
      if (await slugInUse(trx, organizationId, input.slug)) throw slugTaken(input.slug);
      const id = await insertWorkspace(trx, {
        organizationId,
        name: input.name,
        slug: input.slug,
        isDefault: false,
        createdBy,
        now: clock.now(),
        columns: toColumns(input),
      });
      return toWorkspaceRecord((await findWorkspaceById(trx, id))!);
    });
  } catch (err) {
    // Two concurrent creates with one slug: the partial unique index decides, the loser gets 409.
    if (isUniqueViolation(err)) throw slugTaken(input.slug);
    throw err;
  }
}

export async function listWorkspaces(
  store: RecordStore,
  organizationId: string,
  offset: number,
  limit: number,
): Promise<{ data: WorkspaceRecord[]; total_count: number }> {
  const { rows, total } = await listWorkspaceRows(store.db, organizationId, offset, limit);
  return { data: rows.map(toWorkspaceRecord), total_count: total };
}

export async function getWorkspace(
  store: RecordStore,
  organizationId: string,
  ref: string,
): Promise<WorkspaceRecord> {
  return toWorkspaceRecord(await resolveWorkspace(store.db, organizationId, ref));
}

/** Applies the given fields only; an empty update returns the workspace unchanged. */
export async function updateWorkspace(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  ref: string,
  input: WorkspaceInput,
): Promise<WorkspaceRecord> {
  checkInput(input);
  const columns = toColumns(input);
  try {
    return await store.transaction(async (trx) => {
      const ws = await resolveWorkspace(trx, organizationId, ref, {
        forUpdate: store.caps.supportsForUpdate,
      });
      if (Object.keys(columns).length === 0) return toWorkspaceRecord(ws);
      if (input.slug !== undefined && (await slugInUse(trx, organizationId, input.slug, ws.id))) {
        throw slugTaken(input.slug);
      }
      await updateWorkspaceColumns(trx, ws.id, columns, clock.now());
      return toWorkspaceRecord((await findWorkspaceById(trx, ws.id))!);
    });
  } catch (err) {
    if (isUniqueViolation(err) && input.slug !== undefined) throw slugTaken(input.slug);
    throw err;
  }
}
