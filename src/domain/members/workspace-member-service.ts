import { invalid } from "../errors.js";
import { activeKeyCountsByCreator } from "../keys/key-repo.js";
import { resolveWorkspace } from "../workspaces/resolve-workspace.js";
import type { WorkspaceRow } from "../workspaces/workspace-repo.js";
import type { Clock } from "../../lib/clock.js";
import { newId } from "../../lib/ids.js";
import type { Db, RecordStore } from "../../stores/record-store.js";
import { MEMBER_ID_RE } from "./member-input.js";
import {
  defaultMembershipOf,
  toWorkspaceMemberRecord,
  workspaceRoleOf,
  type WorkspaceMemberRecord,
} from "./member-record.js";
import { listMemberRows, membersByIds, type MemberLock, type MemberRow } from "./member-repo.js";
import {
  deleteWorkspaceMembers,
  listWorkspaceMemberRows,
  upsertWorkspaceMembers,
  workspaceMembersOf,
} from "./workspace-member-repo.js";

/**
 * Workspace members (SDK `workspaces.listMembers`, `bulkAddMembers`, `bulkRemoveMembers`;
 * docs/members.md). `{id}` is the workspace UUID or slug, as on every workspace route. The default
 * workspace holds every member of the organization without stored rows: it lists them all, adding
 * to it changes nothing, and nobody can be removed from it.
 */

const isDefault = (ws: WorkspaceRow) => Number(ws.is_default) === 1;

export async function listWorkspaceMembers(
  store: RecordStore,
  organizationId: string,
  ref: string,
  offset: number,
  limit: number,
): Promise<{ data: WorkspaceMemberRecord[]; total_count: number }> {
  const ws = await resolveWorkspace(store.db, organizationId, ref);
  if (isDefault(ws)) {
    const { rows, total } = await listMemberRows(store.db, organizationId, offset, limit);
    return { data: rows.map((m) => defaultMembershipOf(ws.id, m)), total_count: total };
  }
  const { rows, total } = await listWorkspaceMemberRows(store.db, ws.id, offset, limit);
  return { data: rows.map(toWorkspaceMemberRecord), total_count: total };
}

/**
 * The organization's members among the ids, in the order first given (duplicates once). Ids that
 * name no member of the organization (another organization's included) are one 400 naming them
 * all, before anything is written.
 */
async function knownMembers(
  db: Db,
  organizationId: string,
  userIds: readonly string[],
  lock: MemberLock,
): Promise<MemberRow[]> {
  const ids = [...new Set(userIds)];
  // A malformed id names no member and never reaches the store (a NUL is a PostgreSQL error).
  const rows = await membersByIds(
    db,
    organizationId,
    ids.filter((id) => MEMBER_ID_RE.test(id)),
    lock,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const unknown = ids.filter((id) => !byId.has(id));
  if (unknown.length > 0) {
    throw invalid(
      `user_ids: ${listed(unknown)} ${unknown.length === 1 ? "is not a member" : "are not members"} of this organization`,
      { unknown_user_ids: unknown },
    );
  }
  return ids.map((id) => byId.get(id)!);
}

/** Ids for a message: JSON strings (an id may hold anything), at most 10 then "and N more". */
function listed(ids: readonly string[]): string {
  const shown = ids.slice(0, 10).map((id) => JSON.stringify(id.slice(0, 80)));
  return ids.length > 10 ? `${shown.join(", ")} and ${ids.length - 10} more` : shown.join(", ");
}

/**
 * Adds organization members to a workspace with the role they hold in the organization
 * (`org:admin` → `admin`, else `member`). A member already there keeps the membership (its id and
 * created_at) and takes the current role: `added_count` counts every membership created or
 * updated, so it is always the number of distinct members in `data`. On the default workspace
 * nothing is written and `data` is the members' standing memberships.
 */
export async function addWorkspaceMembers(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  ref: string,
  userIds: readonly string[],
): Promise<{ added_count: number; data: WorkspaceMemberRecord[] }> {
  const lock = store.caps.supportsForUpdate;
  return store.transaction(async (trx) => {
    // The workspace row first, then the members' (the order every members write takes).
    const ws = await resolveWorkspace(trx, organizationId, ref, { forUpdate: lock });
    const members = await knownMembers(trx, organizationId, userIds, lock ? "share" : "none");
    if (isDefault(ws)) {
      return { added_count: members.length, data: members.map((m) => defaultMembershipOf(ws.id, m)) };
    }
    const at = clock.now().toISOString();
    await upsertWorkspaceMembers(
      trx,
      members.map((m) => ({
        id: newId(),
        organization_id: organizationId,
        workspace_id: ws.id,
        user_id: m.id,
        role: workspaceRoleOf(m.role),
        created_at: at,
      })),
    );
    const rows = new Map(
      (
        await workspaceMembersOf(
          trx,
          ws.id,
          members.map((m) => m.id),
        )
      ).map((r) => [r.user_id, r]),
    );
    const data = members.map((m) => toWorkspaceMemberRecord(rows.get(m.id)!));
    return { added_count: data.length, data };
  });
}

/**
 * Removes members from a workspace, all or none: ids that name no member of the organization,
 * members with active keys in the workspace (keys whose `creator_user_id` is the member, not
 * deleted and not expired), and the default workspace are each a 400 that changes nothing.
 * `removed_count` counts the memberships that existed.
 */
export async function removeWorkspaceMembers(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  ref: string,
  userIds: readonly string[],
): Promise<{ removed_count: number }> {
  const lock = store.caps.supportsForUpdate;
  return store.transaction(async (trx) => {
    // Holding the workspace row: a key being created in it (which shares the row) waits.
    const ws = await resolveWorkspace(trx, organizationId, ref, { forUpdate: lock });
    if (isDefault(ws)) {
      throw invalid(
        "id: the default workspace holds every member of the organization; to remove someone, delete the member (DELETE /api/v1/organization/members/{id})",
      );
    }
    const members = await knownMembers(trx, organizationId, userIds, lock ? "share" : "none");
    const ids = members.map((m) => m.id);
    const counts = await activeKeyCountsByCreator(trx, organizationId, ids, ws.id, clock.now());
    const holding = ids.filter((id) => counts.has(id));
    if (holding.length > 0) {
      throw invalid(
        `user_ids: ${listed(holding)} ${holding.length === 1 ? "has" : "have"} active API keys in this workspace; delete them (or let them expire) before removing ${holding.length === 1 ? "the member" : "these members"}`,
        { user_ids_with_active_keys: holding },
      );
    }
    return { removed_count: await deleteWorkspaceMembers(trx, ws.id, ids) };
  });
}
