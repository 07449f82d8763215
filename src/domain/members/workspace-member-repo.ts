import type { Selectable } from "kysely";
import type { Db } from "../../stores/record-store.js";
import type { WorkspaceMembersTable } from "../../stores/schema.js";

/**
 * The workspace_members table: who belongs to which non-default workspace. The default workspace
 * has no rows (every member of the organization belongs to it: workspace-member-service.ts).
 */
export type WorkspaceMemberRow = Selectable<WorkspaceMembersTable>;

/**
 * Inserts the memberships; one that exists (same workspace and user) keeps its id and created_at
 * and takes the new role. Callers bound the list.
 */
export async function upsertWorkspaceMembers(db: Db, rows: readonly WorkspaceMemberRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto("workspace_members")
    .values([...rows])
    .onConflict((oc) =>
      oc.columns(["workspace_id", "user_id"]).doUpdateSet((eb) => ({ role: eb.ref("excluded.role") })),
    )
    .execute();
}

/** The workspace's memberships of the given users (callers bound the list). */
export function workspaceMembersOf(
  db: Db,
  workspaceId: string,
  userIds: readonly string[],
): Promise<WorkspaceMemberRow[]> {
  if (userIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom("workspace_members")
    .selectAll()
    .where("workspace_id", "=", workspaceId)
    .where("user_id", "in", userIds)
    .execute();
}

/** One page of a workspace's memberships, oldest first (ties by id), and how many there are. */
export async function listWorkspaceMemberRows(
  db: Db,
  workspaceId: string,
  offset: number,
  limit: number,
): Promise<{ rows: WorkspaceMemberRow[]; total: number }> {
  const rows = await db
    .selectFrom("workspace_members")
    .selectAll()
    .where("workspace_id", "=", workspaceId)
    .orderBy("created_at")
    .orderBy("id")
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom("workspace_members")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("workspace_id", "=", workspaceId)
    .executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

/** Removes the users from the workspace; returns how many memberships there were. */
export async function deleteWorkspaceMembers(
  db: Db,
  workspaceId: string,
  userIds: readonly string[],
): Promise<number> {
  if (userIds.length === 0) return 0;
  const res = await db
    .deleteFrom("workspace_members")
    .where("workspace_id", "=", workspaceId)
    .where("user_id", "in", userIds)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Sets the role of every membership of a user (the member's organization role changed). */
export async function setWorkspaceRolesOfUser(
  db: Db,
  organizationId: string,
  userId: string,
  role: string,
): Promise<void> {
  await db
    .updateTable("workspace_members")
    .set({ role })
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .execute();
}

/** Every membership of a user (the member is being deleted). */
export async function deleteMembershipsOfUser(db: Db, organizationId: string, userId: string): Promise<void> {
  await db
    .deleteFrom("workspace_members")
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .execute();
}

/** Every membership of a workspace (the workspace is being deleted). */
export async function deleteMembershipsOfWorkspace(db: Db, workspaceId: string): Promise<void> {
  await db.deleteFrom("workspace_members").where("workspace_id", "=", workspaceId).execute();
}
