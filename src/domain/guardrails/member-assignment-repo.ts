import type { Db } from "../../stores/record-store.js";

/**
 * Writes to guardrail_member_assignments that other modules need. The guardrail assignment
 * operations (bulk assign and unassign) belong beside this; members/ calls it when a member is
 * deleted.
 */

/** Drops the member's guardrail assignment, if any (at most one per member). */
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
