import { Type, type Static } from "typebox";
import { Nullable } from "../../lib/typebox.js";
import type { KeyAssignmentRow } from "./key-assignment-repo.js";
import type { MemberAssignmentRow } from "./member-assignment-repo.js";

/** The wire forms of guardrail assignments (the SDK's KeyAssignment and MemberAssignment). */

export const KeyAssignmentSchema = Type.Object({
  id: Type.String(),
  guardrail_id: Type.String(),
  key_hash: Type.String(),
  key_name: Type.String(),
  key_label: Type.String(),
  assigned_by: Nullable(Type.String()),
  created_at: Type.String(),
});
export type KeyAssignmentRecord = Static<typeof KeyAssignmentSchema>;

export const MemberAssignmentSchema = Type.Object({
  id: Type.String(),
  guardrail_id: Type.String(),
  user_id: Type.String(),
  organization_id: Type.String(),
  assigned_by: Nullable(Type.String()),
  created_at: Type.String(),
});
export type MemberAssignmentRecord = Static<typeof MemberAssignmentSchema>;

/** `key` is the assigned key's name and label (empty when the key row is gone). */
export const toKeyAssignment = (
  r: KeyAssignmentRow,
  key: { name: string; label: string } | undefined,
): KeyAssignmentRecord => ({
  id: r.id,
  guardrail_id: r.guardrail_id,
  key_hash: r.key_hash,
  key_name: key?.name ?? "",
  key_label: key?.label ?? "",
  assigned_by: r.assigned_by,
  created_at: r.created_at,
});

export const toMemberAssignment = (r: MemberAssignmentRow): MemberAssignmentRecord => ({
  id: r.id,
  guardrail_id: r.guardrail_id,
  user_id: r.user_id,
  organization_id: r.organization_id,
  assigned_by: r.assigned_by,
  created_at: r.created_at,
});
