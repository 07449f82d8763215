import { deleteMemberAssignmentOfUser } from "../guardrails/member-assignment-repo.js";
import { conflict, invalid, notFound } from "../errors.js";
import { activeKeyCountsByCreator } from "../keys/key-repo.js";
import { isUniqueViolation } from "../../stores/store-errors.js";
import type { Clock } from "../../lib/clock.js";
import type { RecordStore } from "../../stores/record-store.js";
import {
  checkMemberName,
  checkMemberRole,
  MEMBER_ID_RE,
  newMemberId,
  normaliseEmail,
} from "./member-input.js";
import { toMemberRecord, workspaceRoleOf, type MemberRecord } from "./member-record.js";
import {
  deleteMemberRow,
  findMember,
  findMemberByEmail,
  insertMember,
  listMemberRows,
  updateMemberRow,
  type MemberColumnsPatch,
  type MemberRow,
} from "./member-repo.js";
import { deleteMembershipsOfUser, setWorkspaceRolesOfUser } from "./workspace-member-repo.js";

/**
 * Organization members (docs/members.md): the people keys are attributed to (`creator_user_id`)
 * and guardrails are assigned to. Listing is the official API; create, update and delete are
 * Gatehouse's own (the hosted original manages people through its identity provider). Callers
 * tell the policy cache (`guardrailsChanged`) after every write.
 */

export interface CreateMemberInput {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  role?: string;
}

export interface UpdateMemberInput {
  first_name?: string | null;
  last_name?: string | null;
  role?: string;
}

const emailTaken = (email: string) =>
  conflict(`email: a member with email '${email}' already exists in this organization`);

export async function createMember(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  input: CreateMemberInput,
): Promise<MemberRecord> {
  const email = normaliseEmail(input.email);
  const at = clock.now().toISOString();
  const row: MemberRow = {
    id: newMemberId(),
    organization_id: organizationId,
    email,
    first_name: checkMemberName(input.first_name ?? null, "first_name"),
    last_name: checkMemberName(input.last_name ?? null, "last_name"),
    role: checkMemberRole(input.role ?? "org:member"),
    created_at: at,
    updated_at: at,
  };
  try {
    await store.transaction(async (trx) => {
      if (await findMemberByEmail(trx, organizationId, email)) throw emailTaken(email);
      await insertMember(trx, row);
    });
  } catch (err) {
    // Two concurrent creates with one email: the unique index decides, the loser gets 409.
    if (isUniqueViolation(err)) throw emailTaken(email);
    throw err;
  }
  return toMemberRecord(row);
}

export async function listMembers(
  store: RecordStore,
  organizationId: string,
  offset: number,
  limit: number,
): Promise<{ data: MemberRecord[]; total_count: number }> {
  const { rows, total } = await listMemberRows(store.db, organizationId, offset, limit);
  return { data: rows.map(toMemberRecord), total_count: total };
}

/**
 * A member of the organization by id (`user_…`) or email (the CLI's `members remove`); anything
 * that names none, another organization's member included, is 404.
 */
export async function findMemberByRef(
  store: RecordStore,
  organizationId: string,
  ref: string,
): Promise<MemberRow> {
  const row = MEMBER_ID_RE.test(ref)
    ? await findMember(store.db, organizationId, ref)
    : ref.includes("@") && !ref.includes("\u0000")
      ? await findMemberByEmail(store.db, organizationId, ref.trim().toLowerCase())
      : undefined;
  if (!row) throw notFound("Member");
  return row;
}

/** Applies the given fields only; an empty update returns the member unchanged. */
export async function updateMember(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  id: string,
  input: UpdateMemberInput,
): Promise<MemberRecord> {
  if (!MEMBER_ID_RE.test(id)) throw notFound("Member");
  const patch: MemberColumnsPatch = {};
  if (input.first_name !== undefined) patch.first_name = checkMemberName(input.first_name, "first_name");
  if (input.last_name !== undefined) patch.last_name = checkMemberName(input.last_name, "last_name");
  if (input.role !== undefined) patch.role = checkMemberRole(input.role);
  return store.transaction(async (trx) => {
    const row = await findMember(trx, organizationId, id, store.caps.supportsForUpdate ? "update" : "none");
    if (!row) throw notFound("Member");
    if (Object.keys(patch).length === 0) return toMemberRecord(row);
    await updateMemberRow(trx, organizationId, id, patch, clock.now());
    // Members hold their organization role in every workspace they belong to.
    if (patch.role !== undefined && patch.role !== row.role) {
      await setWorkspaceRolesOfUser(trx, organizationId, id, workspaceRoleOf(patch.role));
    }
    return toMemberRecord({ ...row, ...patch });
  });
}

/**
 * Deletes a member with its workspace memberships and its guardrail assignment, in one
 * transaction that holds the member row (a key being created for the member waits for it).
 * Refused (400) while the member has active keys anywhere in the organization: they would name a
 * member that no longer exists.
 */
export async function deleteMember(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  id: string,
): Promise<MemberRecord> {
  return store.transaction(async (trx) => {
    const row = MEMBER_ID_RE.test(id)
      ? await findMember(trx, organizationId, id, store.caps.supportsForUpdate ? "update" : "none")
      : undefined;
    if (!row) throw notFound("Member");
    const n = (await activeKeyCountsByCreator(trx, organizationId, [id], null, clock.now())).get(id) ?? 0;
    if (n > 0) {
      throw invalid(
        `id: member ${id} has ${n} active API key${n === 1 ? "" : "s"} (creator_user_id); delete ${n === 1 ? "it" : "them"} or let ${n === 1 ? "it" : "them"} expire before removing the member`,
        { active_key_count: n },
      );
    }
    await deleteMembershipsOfUser(trx, organizationId, id);
    await deleteMemberAssignmentOfUser(trx, organizationId, id);
    await deleteMemberRow(trx, organizationId, id);
    return toMemberRecord(row);
  });
}
