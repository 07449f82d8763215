import { invalid } from "../errors.js";
import type { DialectCaps } from "../../stores/dialect.js";
import type { Db } from "../../stores/record-store.js";
import { MEMBER_ID_RE } from "./member-input.js";
import { findMember, organizationHasMembers } from "./member-repo.js";

/**
 * The `creator_user_id` of a key being created names its member (docs/members.md "Keys and their
 * creators"). An organization without members keeps accepting any value, as before members
 * existed (clients that send the hosted original's user ids keep working); once it has one, a
 * value that names no member is a 400. The member row is held shared until the key's transaction
 * ends, so the member cannot be deleted in between (deleting a member with keys is refused).
 */
export async function checkKeyCreator(
  db: Db,
  caps: DialectCaps,
  organizationId: string,
  userId: string,
): Promise<void> {
  if (!(await organizationHasMembers(db, organizationId))) return;
  const member = MEMBER_ID_RE.test(userId)
    ? await findMember(db, organizationId, userId, caps.supportsForUpdate ? "share" : "none")
    : undefined;
  if (!member) {
    throw invalid(
      `creator_user_id: ${JSON.stringify(userId.slice(0, 80))} is not a member of this organization (see GET /api/v1/organization/members)`,
    );
  }
}
