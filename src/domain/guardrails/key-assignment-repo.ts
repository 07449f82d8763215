import { chunksOf } from "../../lib/chunks.js";
import { newId } from "../../lib/ids.js";
import type { Db } from "../../stores/record-store.js";
import type { GuardrailKeyAssignmentsTable } from "../../stores/schema.js";

/** The guardrail_key_assignments table: at most one guardrail per key (unique key_hash). */
export type KeyAssignmentRow = GuardrailKeyAssignmentsTable;

/** Rows per insert statement (6 bound values each: far under either engine's limit). */
const CHUNK = 500;

/**
 * Assigns the keys to the guardrail, replacing any other guardrail they hold, in one upsert per
 * chunk (safe against a concurrent assignment of the same key). Returns how many keys were newly
 * assigned or moved here; a key already on this guardrail is left as it is and not counted.
 */
export async function assignKeyRows(
  db: Db,
  a: {
    organizationId: string;
    guardrailId: string;
    hashes: readonly string[];
    assignedBy: string | null;
    now: string;
  },
): Promise<number> {
  let n = 0;
  for (const chunk of chunksOf(a.hashes, CHUNK)) {
    const res = await db
      .insertInto("guardrail_key_assignments")
      .values(
        chunk.map((hash) => ({
          id: newId(),
          organization_id: a.organizationId,
          guardrail_id: a.guardrailId,
          key_hash: hash,
          assigned_by: a.assignedBy,
          created_at: a.now,
        })),
      )
      .onConflict((oc) =>
        oc
          .column("key_hash")
          .doUpdateSet((eb) => ({
            id: eb.ref("excluded.id"),
            guardrail_id: eb.ref("excluded.guardrail_id"),
            assigned_by: eb.ref("excluded.assigned_by"),
            created_at: eb.ref("excluded.created_at"),
          }))
          .where("guardrail_key_assignments.guardrail_id", "!=", a.guardrailId),
      )
      .executeTakeFirst();
    n += Number(res.numInsertedOrUpdatedRows ?? 0n);
  }
  return n;
}

/** Removes the keys' assignments to this guardrail (others are left); returns how many. */
export async function unassignKeyRows(
  db: Db,
  guardrailId: string,
  hashes: readonly string[],
): Promise<number> {
  let n = 0;
  for (const chunk of chunksOf(hashes, CHUNK)) {
    const res = await db
      .deleteFrom("guardrail_key_assignments")
      .where("guardrail_id", "=", guardrailId)
      .where("key_hash", "in", chunk)
      .executeTakeFirst();
    n += Number(res.numDeletedRows);
  }
  return n;
}

/** Removes every assignment of the keys, whatever guardrail (the keys were deleted). */
export async function deleteKeyAssignments(db: Db, hashes: readonly string[]): Promise<void> {
  for (const chunk of chunksOf(hashes, CHUNK)) {
    await db.deleteFrom("guardrail_key_assignments").where("key_hash", "in", chunk).execute();
  }
}

/** Removes every key assignment of a guardrail (it is being deleted). */
export async function deleteKeyAssignmentsOfGuardrail(db: Db, guardrailId: string): Promise<void> {
  await db.deleteFrom("guardrail_key_assignments").where("guardrail_id", "=", guardrailId).execute();
}

/** A page of the organization's key assignments (of one guardrail when given), oldest first, and the total. */
export async function listKeyAssignmentRows(
  db: Db,
  q: { organizationId: string; guardrailId: string | null; offset: number; limit: number },
): Promise<{ rows: KeyAssignmentRow[]; total: number }> {
  let query = db.selectFrom("guardrail_key_assignments").where("organization_id", "=", q.organizationId);
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

/** Every key assignment of the organization (key hash and guardrail): what the policy cache holds. */
export function keyAssignmentsOfOrganization(db: Db, organizationId: string) {
  return db
    .selectFrom("guardrail_key_assignments")
    .select(["key_hash", "guardrail_id"])
    .where("organization_id", "=", organizationId)
    .execute();
}
