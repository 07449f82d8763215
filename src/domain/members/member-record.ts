import { Type, type Static } from "typebox";
import { nameUuid } from "../../lib/name-uuid.js";
import { Nullable, StringEnum } from "../../lib/typebox.js";
import type { MemberRow } from "./member-repo.js";
import type { WorkspaceMemberRow } from "./workspace-member-repo.js";

export const MEMBER_ROLES = ["org:admin", "org:member"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export const WORKSPACE_ROLES = ["admin", "member"] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

/** The wire form of an organization member (SDK `ListOrganizationMembersData`). */
export const MemberRecordSchema = Type.Object({
  id: Type.String({ description: "`user_` and a random URL-safe id" }),
  email: Type.String({ description: "Lower-cased; unique in the organization" }),
  first_name: Nullable(Type.String()),
  last_name: Nullable(Type.String()),
  role: StringEnum(MEMBER_ROLES),
});
export type MemberRecord = Static<typeof MemberRecordSchema>;

/** The wire form of a workspace membership (SDK `WorkspaceMember`). */
export const WorkspaceMemberRecordSchema = Type.Object({
  id: Type.String({ format: "uuid" }),
  workspace_id: Type.String({ format: "uuid" }),
  user_id: Type.String(),
  role: StringEnum(WORKSPACE_ROLES),
  created_at: Type.String(),
});
export type WorkspaceMemberRecord = Static<typeof WorkspaceMemberRecordSchema>;

export function toMemberRecord(r: MemberRow): MemberRecord {
  return {
    id: r.id,
    email: r.email,
    first_name: r.first_name,
    last_name: r.last_name,
    role: r.role as MemberRole,
  };
}

/** The workspace role a member takes from its organization role. */
export const workspaceRoleOf = (role: string): WorkspaceRole => (role === "org:admin" ? "admin" : "member");

export function toWorkspaceMemberRecord(r: WorkspaceMemberRow): WorkspaceMemberRecord {
  return {
    id: r.id,
    workspace_id: r.workspace_id,
    user_id: r.user_id,
    role: r.role as WorkspaceRole,
    created_at: r.created_at,
  };
}

/** Namespace of the name-based UUIDs of default-workspace memberships. */
const DEFAULT_MEMBERSHIP_NAMESPACE = "3b0f6c1e-8d2a-5e47-9c13-7a5d2e8f4b60";

/**
 * A member's membership of the default workspace, which holds every member of the organization
 * without a stored row: its id is derived from the workspace and the user (stable across reads,
 * instances and restarts), its role from the organization role, its created_at is the member's.
 */
export function defaultMembershipOf(workspaceId: string, m: MemberRow): WorkspaceMemberRecord {
  return {
    id: nameUuid(DEFAULT_MEMBERSHIP_NAMESPACE, `${workspaceId.toLowerCase()}\u0000${m.id}`),
    workspace_id: workspaceId,
    user_id: m.id,
    role: workspaceRoleOf(m.role),
    created_at: m.created_at,
  };
}
