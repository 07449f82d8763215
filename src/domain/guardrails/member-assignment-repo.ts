import { chunksOf } from "../../lib/chunks.js";
import { newId } from "../../lib/ids.js";
import type { Db } from "../../stores/record-store.js";
import type { GuardrailMemberAssignmentsTable } from "../../stores/schema.js";

/** The guardrail_member_assignments table: at most one guardrail per member of an organization. */
export type MemberAssignmentRow = GuardrailMemberAssignmentsTable;

/** Rows per insert statement (6 bound values each: far under either engine's limit). */
const CHUNK = 500;

/**
 * Assigns the members to the guardrail, replacing any other guardrail they hold (one upsert per
 * chunk). Returns how many members were newly assigned or moved here.
 */
export async function assignMemberRows(
  db: Db,
  a: {
    organizationId: string;
    guardrailId: string;
    userIds: readonly string[];
    assignedBy: string | null;
    now: string;
  },
): Promise<number> {
  let n = 0;
  for (const chunk of chunksOf(a.userIds, CHUNK)) {
    const res = await db
      .insertInto("guardrail_member_assignments")
      .values(
        chunk.map((userId) => ({
          id: newId(),
          organization_id: a.organizationId,
          guardrail_id: a.guardrailId,
          user_id: userId,
          assigned_by: a.assignedBy,
          created_at: a.now,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(["organization_id", "user_id"])
          .doUpdateSet((eb) => ({
            id: eb.ref("excluded.id"),
            guardrail_id: eb.ref("excluded.guardrail_id"),
            assigned_by: eb.ref("excluded.assigned_by"),
            created_at: eb.ref("excluded.created_at"),
          }))
          .where("guardrail_member_assignments.guardrail_id", "!=", a.guardrailId),
      )
      .executeTakeFirst();
    n += Number(res.numInsertedOrUpdatedRows ?? 0n);
  }
  return n;
}

/** Removes the members' assignments to this guardrail (others are left); returns how many. */
export async function unassignMemberRows(
  db: Db,
  organizationId: string,
  guardrailId: string,
  userIds: readonly string[],
): Promise<number> {
  let n = 0;
  for (const chunk of chunksOf(userIds, CHUNK)) {
    const res = await db
      .deleteFrom("guardrail_member_assignments")
      .where("organization_id", "=", organizationId)
      .where("guardrail_id", "=", guardrailId)
      .where("user_id", "in", chunk)
      .executeTakeFirst();
    n += Number(res.numDeletedRows);
  }
  return n;
}

/** Drops the member's guardrail assignment, if any (the member is being deleted: docs/members.md). */
export async function deleteMemberAssignmentOfUser(
  db: Db,
  organizationId: string,
  userId: string,
): Promise<void> {
  await db
    .deleteFrom("guardrail_member_assignments")
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .execute();
}

/** Removes every member assignment of a guardrail (it is being deleted). */
export async function deleteMemberAssignmentsOfGuardrail(db: Db, guardrailId: string): Promise<void> {
  await db.deleteFrom("guardrail_member_assignments").where("guardrail_id", "=", guardrailId).execute();
}

/** A page of the organization's member assignments (of one guardrail when given), oldest first, and the total. */
export async function listMemberAssignmentRows(
  db: Db,
  q: { organizationId: string; guardrailId: string | null; offset: number; limit: number },
): Promise<{ rows: MemberAssignmentRow[]; total: number }> {
  let query = db.selectFrom("guardrail_member_assignments").where("organization_id", "=", q.organizationId);
  if (q.guardrailId !== null) query = query.where("guardrail_id", "=", q.guardrailId);
  const count = await query.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirst();
  const rows = await query
    .selectAll()
    .orderBy("created_at")
    .orderBy("id")
    .offset(q.offset)
    .limit(q.limit)
    .execute();
  return { rows, total: Number(count?.n ?? 0) };
}

/** Every member assignment of the organization (member id and guardrail): what the policy cache holds. */
export function memberAssignmentsOfOrganization(db: Db, organizationId: string) {
  return db
    .selectFrom("guardrail_member_assignments")
    .select(["user_id", "guardrail_id"])
    .where("organization_id", "=", organizationId)
    .execute();
}
