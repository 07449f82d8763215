import type { Updateable } from "kysely";
import type { Db } from "../../stores/record-store.js";
import type { ByokKeysTable } from "../../stores/schema.js";

/** The byok_keys table: an organization's own provider credentials, sealed (never plain). */
export type ByokRow = ByokKeysTable;

export async function insertByokRow(db: Db, row: ByokRow): Promise<void> {
  await db.insertInto("byok_keys").values(row).execute();
}

/** How many keys a workspace holds for a provider (a new key's default sort_order). */
export async function countByokForProvider(
  db: Db,
  organizationId: string,
  workspaceId: string,
  provider: string,
): Promise<number> {
  const r = await db
    .selectFrom("byok_keys")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "=", workspaceId)
    .where("provider", "=", provider)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export async function findByokRow(db: Db, organizationId: string, id: string): Promise<ByokRow | null> {
  return (
    (await db
      .selectFrom("byok_keys")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .where("id", "=", id)
      .executeTakeFirst()) ?? null
  );
}

/** A page of a workspace's keys (optionally of one provider), oldest first, with the total. */
export async function listByokRows(
  db: Db,
  q: { organizationId: string; workspaceId: string; provider?: string; offset: number; limit: number },
): Promise<{ rows: ByokRow[]; total: number }> {
  let query = db
    .selectFrom("byok_keys")
    .where("organization_id", "=", q.organizationId)
    .where("workspace_id", "=", q.workspaceId);
  if (q.provider !== undefined) query = query.where("provider", "=", q.provider);
  const total = await query.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirst();
  const rows = await query
    .selectAll()
    .orderBy("created_at")
    .orderBy("id")
    .offset(q.offset)
    .limit(q.limit)
    .execute();
  return { rows, total: Number(total?.n ?? 0) };
}

/** The keys the gateway may route with: every enabled key of the organization, all workspaces. */
export async function enabledByokRows(db: Db, organizationId: string): Promise<ByokRow[]> {
  return db
    .selectFrom("byok_keys")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("disabled", "=", 0)
    .execute();
}

export async function updateByokRow(
  db: Db,
  organizationId: string,
  id: string,
  patch: Updateable<ByokKeysTable>,
): Promise<void> {
  await db
    .updateTable("byok_keys")
    .set(patch)
    .where("id", "=", id)
    .where("organization_id", "=", organizationId)
    .execute();
}

export async function deleteByokRow(db: Db, organizationId: string, id: string): Promise<void> {
  await db
    .deleteFrom("byok_keys")
    .where("id", "=", id)
    .where("organization_id", "=", organizationId)
    .execute();
}

/** Every key of a workspace (the workspace is being deleted: a secret kept for it is one more to leak). */
export async function deleteByokOfWorkspace(db: Db, workspaceId: string): Promise<void> {
  await db.deleteFrom("byok_keys").where("workspace_id", "=", workspaceId).execute();
}
