import type { Selectable, Updateable } from "kysely";
import type { Db } from "../../stores/record-store.js";
import type { MembersTable } from "../../stores/schema.js";

/** The members table: the people of an organization (docs/members.md). */
export type MemberRow = Selectable<MembersTable>;

/** The columns a PATCH may set. */
export type MemberColumnsPatch = Pick<Updateable<MembersTable>, "first_name" | "last_name" | "role">;

/** Row lock taken on the member rows a statement reads: none, shared, or exclusive. */
export type MemberLock = "none" | "share" | "update";

export async function insertMember(db: Db, row: MemberRow): Promise<void> {
  await db.insertInto("members").values(row).execute();
}

/** A member of the organization by id, optionally locked; undefined when none. */
export function findMember(
  db: Db,
  organizationId: string,
  id: string,
  lock: MemberLock = "none",
): Promise<MemberRow | undefined> {
  let q = db
    .selectFrom("members")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "=", id);
  if (lock === "update") q = q.forUpdate();
  if (lock === "share") q = q.forShare();
  return q.executeTakeFirst();
}

/** A member of the organization by (lower-cased) email; undefined when none. */
export function findMemberByEmail(
  db: Db,
  organizationId: string,
  email: string,
): Promise<MemberRow | undefined> {
  return db
    .selectFrom("members")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("email", "=", email)
    .executeTakeFirst();
}

/**
 * The organization's members among the ids (callers bound the list), optionally with a row lock,
 * so that a member being deleted cannot be added to a workspace at the same time.
 */
export function membersByIds(
  db: Db,
  organizationId: string,
  ids: readonly string[],
  lock: MemberLock = "none",
): Promise<MemberRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  let q = db
    .selectFrom("members")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "in", ids);
  if (lock === "update") q = q.forUpdate();
  if (lock === "share") q = q.forShare();
  return q.execute();
}

/** One page of the organization's members, oldest first (ties by id), and how many there are. */
export async function listMemberRows(
  db: Db,
  organizationId: string,
  offset: number,
  limit: number,
): Promise<{ rows: MemberRow[]; total: number }> {
  const rows = await db
    .selectFrom("members")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .orderBy("created_at")
    .orderBy("id")
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom("members")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("organization_id", "=", organizationId)
    .executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

/** Whether the organization has at least one member. */
export async function organizationHasMembers(db: Db, organizationId: string): Promise<boolean> {
  const row = await db
    .selectFrom("members")
    .select("id")
    .where("organization_id", "=", organizationId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Sets the given columns (and updated_at) of a member. */
export async function updateMemberRow(
  db: Db,
  organizationId: string,
  id: string,
  patch: MemberColumnsPatch,
  now: Date,
): Promise<void> {
  await db
    .updateTable("members")
    .set({ ...patch, updated_at: now.toISOString() })
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .execute();
}

export async function deleteMemberRow(db: Db, organizationId: string, id: string): Promise<void> {
  await db.deleteFrom("members").where("organization_id", "=", organizationId).where("id", "=", id).execute();
}
