import type { Insertable, Selectable, Updateable } from "kysely";
import type { Db } from "../../stores/record-store.js";
import type { DestinationsTable } from "../../stores/schema.js";
import { DESTINATION_TYPE_NAMES } from "./destination-types.js";

export type DestinationRow = Selectable<DestinationsTable>;

/** At most this many live destinations of one type in one workspace. */
export const MAX_DESTINATIONS_PER_TYPE = 5;

export async function insertDestination(db: Db, row: Insertable<DestinationsTable>): Promise<void> {
  await db.insertInto("destinations").values(row).execute();
}

/**
 * A live destination of the organization. Cross-organization and deleted destinations are not
 * found. `lock` takes a row lock (only pass true where the store supports FOR UPDATE).
 */
export function findDestination(
  db: Db,
  organizationId: string,
  id: string,
  lock = false,
): Promise<DestinationRow | undefined> {
  let q = db
    .selectFrom("destinations")
    .selectAll()
    .where("id", "=", id)
    .where("organization_id", "=", organizationId)
    .where("deleted_at", "is", null);
  if (lock) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Live destinations of one workspace, oldest first (id breaks ties), of the stable types only. */
export function listDestinationRows(
  db: Db,
  workspaceId: string,
  offset: number,
  limit: number,
): Promise<DestinationRow[]> {
  return db
    .selectFrom("destinations")
    .selectAll()
    .where("workspace_id", "=", workspaceId)
    .where("deleted_at", "is", null)
    .where("type", "in", DESTINATION_TYPE_NAMES)
    .orderBy("created_at", "asc")
    .orderBy("id", "asc")
    .offset(offset)
    .limit(limit)
    .execute();
}

export async function countDestinations(db: Db, workspaceId: string, type?: string): Promise<number> {
  let q = db
    .selectFrom("destinations")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("workspace_id", "=", workspaceId)
    .where("deleted_at", "is", null);
  q = type === undefined ? q.where("type", "in", DESTINATION_TYPE_NAMES) : q.where("type", "=", type);
  const row = await q.executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function updateDestinationRow(
  db: Db,
  id: string,
  values: Updateable<DestinationsTable>,
): Promise<void> {
  await db.updateTable("destinations").set(values).where("id", "=", id).execute();
}
