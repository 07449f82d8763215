import { invalid, notFound } from "../errors.js";
import { UUID_RE } from "../../lib/ids.js";
import type { DialectCaps } from "../../stores/dialect.js";
import type { Db } from "../../stores/record-store.js";
import {
  findDefaultWorkspace,
  findLiveWorkspace,
  liveWorkspaceIdFor,
  type WorkspaceRow,
} from "./workspace-repo.js";

export interface ResolveOptions {
  /**
   * Lock the row until the transaction ends (`SELECT ... FOR UPDATE`). Pass
   * `store.caps.supportsForUpdate`: SQLite serialises whole transactions and has no row locks.
   */
  forUpdate?: boolean;
}

const lookup = findLiveWorkspace;

/**
 * A live workspace of the organization by UUID or slug. A UUID also matches the slug pattern, so
 * the id is tried first and the slug second. Anything that matches nothing (another
 * organization's workspace, a deleted one, a malformed reference) is 404 "Workspace not found".
 */
export async function resolveWorkspace(
  db: Db,
  organizationId: string,
  ref: string,
  opts: ResolveOptions = {},
): Promise<WorkspaceRow> {
  const forUpdate = opts.forUpdate ?? false;
  // No slug holds U+0000, and PostgreSQL refuses it in a text parameter: answer before asking.
  if (ref.includes("\u0000")) throw notFound("Workspace");
  if (UUID_RE.test(ref)) {
    const byId = await lookup(db, organizationId, "id", ref.toLowerCase(), forUpdate);
    if (byId) return byId;
  }
  const bySlug = await lookup(db, organizationId, "slug", ref, forUpdate);
  if (bySlug) return bySlug;
  throw notFound("Workspace");
}

/**
 * The organization's default workspace, for operations that default to it. After the default
 * workspace has been deleted the organization has none, and the caller must name a workspace:
 * 400 `<field>: required, the organization has no default workspace`.
 */
export async function requireDefaultWorkspace(
  db: Db,
  organizationId: string,
  field = "workspace_id",
): Promise<WorkspaceRow> {
  const ws = await findDefaultWorkspace(db, organizationId);
  if (!ws) throw invalid(`${field}: required, the organization has no default workspace`);
  return ws;
}

/** Row lock taken on the workspace named by a field: none, shared, or exclusive. */
export type WorkspaceLock = "none" | "share" | "update";

/**
 * The workspace a body or query field (`workspace_id`) names, or the organization's default
 * workspace when the field is omitted. Returns null when it is omitted and the organization has no
 * default workspace (the caller decides: 400 on create, an empty page on list). A named workspace
 * that is not a live workspace of the organization is 400: it is a parameter, not a path.
 * Locks apply only where the engine has row locks (`supportsForUpdate`); SQLite serialises
 * transactions instead.
 */
export async function workspaceForField(
  db: Db,
  caps: DialectCaps,
  organizationId: string,
  workspaceId: string | undefined,
  lock: WorkspaceLock = "none",
): Promise<string | null> {
  const id = await liveWorkspaceIdFor(
    db,
    organizationId,
    workspaceId?.toLowerCase(),
    caps.supportsForUpdate ? lock : "none",
  );
  if (id === undefined && workspaceId !== undefined) {
    throw invalid(`workspace_id: no workspace ${workspaceId} in this organization`);
  }
  return id ?? null;
}

/** workspaceForField for operations that create something: no workspace at all is 400. */
export async function requireWorkspaceForField(
  ...args: Parameters<typeof workspaceForField>
): Promise<string> {
  const id = await workspaceForField(...args);
  if (id === null) throw invalid("workspace_id: required, the organization has no default workspace");
  return id;
}
