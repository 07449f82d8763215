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

/** A unique-constraint violation from either engine (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE";
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
