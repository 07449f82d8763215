import { Type } from "typebox";
import {
  MEMBER_ROLES,
  MemberRecordSchema,
  WorkspaceMemberRecordSchema,
} from "../../domain/members/member-record.js";
import { MAX_EMAIL_LENGTH, MAX_MEMBER_NAME_LENGTH } from "../../domain/members/member-input.js";
import { StringEnum } from "../../lib/typebox.js";
import { Nullable, PageQuery } from "./common.js";

/** Organization and workspace members (docs/members.md). */

const Name = Nullable(Type.String({ minLength: 1, maxLength: MAX_MEMBER_NAME_LENGTH }));
const Role = StringEnum(MEMBER_ROLES);

export const MembersQuery = Type.Object(PageQuery);

/** Gatehouse extension: POST /organization/members. */
export const CreateMemberBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: MAX_EMAIL_LENGTH, description: "Stored lower-cased" }),
  first_name: Type.Optional(Name),
  last_name: Type.Optional(Name),
  role: Type.Optional(Role),
});

/** Gatehouse extension: PATCH /organization/members/{id}. */
export const UpdateMemberBody = Type.Object({
  first_name: Type.Optional(Name),
  last_name: Type.Optional(Name),
  role: Type.Optional(Role),
});

/** Any text: an id that is not `user_…` names no member, 404. */
export const MemberParams = Type.Object({ id: Type.String() });

/** The SDK checks nothing but the type of each id; ids that name no member are refused by name. */
export const UserIdsBody = Type.Object({
  user_ids: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 100 }),
});

export const MemberResponse = Type.Object({ data: MemberRecordSchema });
export const MemberListResponse = Type.Object({
  data: Type.Array(MemberRecordSchema),
  total_count: Type.Integer(),
});
export const WorkspaceMemberListResponse = Type.Object({
  data: Type.Array(WorkspaceMemberRecordSchema),
  total_count: Type.Integer(),
});
export const AddedMembersResponse = Type.Object({
  added_count: Type.Integer(),
  data: Type.Array(WorkspaceMemberRecordSchema),
});
export const RemovedMembersResponse = Type.Object({ removed_count: Type.Integer() });
