import { flatMapChunks } from "../../lib/chunks.js";
import type { Selectable, Updateable } from "kysely";
import { newId } from "../../lib/ids.js";
import type { Db } from "../../stores/record-store.js";
import type { WorkspacesTable } from "../../stores/schema.js";

export type WorkspaceRow = Selectable<WorkspacesTable>;

/** The columns a caller may set (everything but identity, ownership and timestamps). */
export type WorkspaceColumns = Omit<
  Updateable<WorkspacesTable>,
  "id" | "organization_id" | "is_default" | "created_by" | "created_at" | "updated_at" | "deleted_at"
>;

export interface NewWorkspace {
  organizationId: string;
  name: string;
  slug: string;
  isDefault: boolean;
  createdBy: string | null;
  now: Date;
  /** Settings that differ from the defaults. */
  columns?: WorkspaceColumns;
}

/** Inserts a workspace with every setting at its default; returns its id. */
export async function insertWorkspace(db: Db, w: NewWorkspace): Promise<string> {
  const id = newId();
  const at = w.now.toISOString();
  await db
    .insertInto("workspaces")
    .values({
      id,
      organization_id: w.organizationId,
      name: w.name,
      slug: w.slug,
      description: null,
      is_default: w.isDefault ? 1 : 0,
      default_text_model: null,
      default_image_model: null,
      default_provider_sort: null,
      disabled_server_tools: null,
      io_logging_api_key_ids: null,
      io_logging_sampling_rate: 1,
      is_data_discount_logging_enabled: 0,
      is_observability_broadcast_enabled: 0,
      is_observability_io_logging_enabled: 0,
      include_byok_in_budgets: 0,
      created_by: w.createdBy,
      created_at: at,
      updated_at: at,
      deleted_at: null,
      ...w.columns,
    })
    .execute();
  return id;
}

/** The organization's default workspace (live), or undefined when it has been deleted. */
export function findDefaultWorkspace(db: Db, organizationId: string): Promise<WorkspaceRow | undefined> {
  return db
    .selectFrom("workspaces")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("is_default", "=", 1)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}

/**
 * One page of the organization's live workspaces (the default workspace first, then oldest first,
 * ties broken by id, so pages are stable) and how many there are in all.
 */
export async function listWorkspaceRows(
  db: Db,
  organizationId: string,
  offset: number,
  limit: number,
): Promise<{ rows: WorkspaceRow[]; total: number }> {
  const rows = await db
    .selectFrom("workspaces")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("deleted_at", "is", null)
    .orderBy("is_default", "desc")
    .orderBy("created_at")
    .orderBy("id")
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom("workspaces")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("organization_id", "=", organizationId)
    .where("deleted_at", "is", null)
    .executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

export async function findWorkspaceById(db: Db, id: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom("workspaces").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Whether a live workspace of the organization other than `exceptId` already uses the slug. */
export async function slugInUse(
  db: Db,
  organizationId: string,
  slug: string,
  exceptId: string | null = null,
): Promise<boolean> {
  let q = db
    .selectFrom("workspaces")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("slug", "=", slug)
    .where("deleted_at", "is", null);
  if (exceptId !== null) q = q.where("id", "!=", exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** Ids per lookup statement (bound values stay far under each engine's limit). */
const LOOKUP_CHUNK = 1_000;

/** Which of the ids are workspaces of the organization (deleted ones included: ids are never reused). */
export async function workspaceIdsIn(
  db: Db,
  organizationId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const rows = await flatMapChunks(ids, LOOKUP_CHUNK, (chunk) =>
    db
      .selectFrom("workspaces")
      .select("id")
      .where("organization_id", "=", organizationId)
      .where("id", "in", chunk)
      .execute(),
  );
  return new Set(rows.map((r) => r.id));
}

/** The live workspace of the organization with this slug. */
export function findWorkspaceBySlug(
  db: Db,
  organizationId: string,
  slug: string,
): Promise<WorkspaceRow | undefined> {
  return findLiveWorkspace(db, organizationId, "slug", slug, false);
}

/** A live workspace of the organization by id or slug, optionally locked (`FOR UPDATE`). */
export function findLiveWorkspace(
  db: Db,
  organizationId: string,
  column: "id" | "slug",
  value: string,
  forUpdate: boolean,
): Promise<WorkspaceRow | undefined> {
  const q = db
    .selectFrom("workspaces")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where(column, "=", value)
    .where("deleted_at", "is", null);
  return (forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

/**
 * The workspace that holds keys made without one: the live default, else the oldest live
 * workspace (ties by id); undefined when the organization has no live workspace.
 */
export async function findHomeWorkspace(db: Db, organizationId: string): Promise<WorkspaceRow | undefined> {
  return (
    (await findDefaultWorkspace(db, organizationId)) ??
    (await db
      .selectFrom("workspaces")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .where("deleted_at", "is", null)
      .orderBy("created_at")
      .orderBy("id")
      .executeTakeFirst())
  );
}

/** Sets the given columns (and updated_at) of a workspace. */
export async function updateWorkspaceColumns(
  db: Db,
  id: string,
  columns: WorkspaceColumns,
  now: Date,
): Promise<void> {
  await db
    .updateTable("workspaces")
    .set({ ...columns, updated_at: now.toISOString() })
    .where("id", "=", id)
    .execute();
}

/** Soft delete: the row stays (analytics keeps its name), the workspace is gone everywhere else. */
export async function softDeleteWorkspace(db: Db, id: string, now: Date): Promise<void> {
  const at = now.toISOString();
  await db.updateTable("workspaces").set({ deleted_at: at, updated_at: at }).where("id", "=", id).execute();
}

/**
 * Id of the live workspace of the organization with this id, or of its live default when `id` is
 * undefined; optionally with a shared or exclusive row lock (only where the engine has row locks).
 */
export async function liveWorkspaceIdFor(
  db: Db,
  organizationId: string,
  id: string | undefined,
  lock: "none" | "share" | "update",
): Promise<string | undefined> {
  let q = db
    .selectFrom("workspaces")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("deleted_at", "is", null);
  q = id === undefined ? q.where("is_default", "=", 1) : q.where("id", "=", id);
  if (lock === "update") q = q.forUpdate();
  if (lock === "share") q = q.forShare();
  return (await q.executeTakeFirst())?.id;
}

/** Every workspace of the organization (deleted too) with the columns reconciliation needs. */
export function workspacesOfOrganization(db: Db, organizationId: string) {
  return db
    .selectFrom("workspaces")
    .select(["id", "name", "is_default", "deleted_at"])
    .where("organization_id", "=", organizationId)
    .execute();
}

/** Id and name of each of the organization's workspaces among the ids, in one statement. */
export function workspaceNamesByIds(db: Db, organizationId: string, ids: readonly string[]) {
  return db
    .selectFrom("workspaces")
    .select(["id", "name"])
    .where("organization_id", "=", organizationId)
    .where("id", "in", ids)
    .execute();
}

/** Ids of the organization's workspaces (deleted too), oldest first; `ref` narrows to an id or slug. */
export async function workspaceIdsByRef(db: Db, organizationId: string, ref?: string): Promise<string[]> {
  let q = db.selectFrom("workspaces").select("id").where("organization_id", "=", organizationId);
  if (ref !== undefined) q = q.where((eb) => eb.or([eb("id", "=", ref), eb("slug", "=", ref)]));
  return (await q.orderBy("created_at").execute()).map((w) => w.id);
}

/** Takes the workspace row's exclusive lock until the transaction ends (PostgreSQL). */
export async function lockWorkspaceRow(db: Db, id: string): Promise<void> {
  await db.selectFrom("workspaces").select("id").where("id", "=", id).forUpdate().execute();
}

/**
 * THE rule for "the default workspace" of activity: legacy activity (no workspace) belongs to the
 * organization's default workspace. The live default wins; when it has been deleted, the deleted
 * default (the oldest, should there be several) keeps owning that history, so totals never move
 * to another workspace. null when the organization never had a default.
 */
export async function activityDefaultWorkspaceId(db: Db, organizationId: string): Promise<string | null> {
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
