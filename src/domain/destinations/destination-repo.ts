import type { Insertable, Selectable, Updateable } from "kysely";
import type { Db } from "../../stores/record-store.js";
import { QueryTemplate } from "../../stores/query-template.js";
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

/**
 * The organization's enabled destinations, compiled once: it runs once per accepted batch (per
 * recorder flush of the gateway), and building it per call was about a third of
 * enqueueBroadcast's time in a profile.
 */
const enabledDestinations = new QueryTemplate((db: Db, _shape, organizationId: string) =>
  db
    .selectFrom("destinations")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("enabled", "=", 1)
    .where("deleted_at", "is", null)
    .compile(),
);

/** The ids of the organization's enabled live destinations. */
export async function enabledDestinationIds(db: Db, organizationId: string): Promise<string[]> {
  return (await enabledDestinations.execute(db, "", organizationId)).rows.map((d) => d.id);
}

/** The live destinations of these organizations (enabled or paused), of every type. */
export function liveDestinationsOf(db: Db, organizationIds: readonly string[]): Promise<DestinationRow[]> {
  return db
    .selectFrom("destinations")
    .selectAll()
    .where("organization_id", "in", organizationIds)
    .where("deleted_at", "is", null)
    .execute();
}

/** Every live destination, of every organization, by organization then age (the CLI's status). */
export function allLiveDestinations(
  db: Db,
): Promise<Pick<DestinationRow, "id" | "organization_id" | "type" | "name" | "enabled">[]> {
  return db
    .selectFrom("destinations")
    .select(["id", "organization_id", "type", "name", "enabled"])
    .where("deleted_at", "is", null)
    .orderBy("organization_id")
    .orderBy("created_at")
    .execute();
}

/** The organization of a live destination, whichever it is (the CLI, which acts for all). */
export async function organizationOfDestination(db: Db, id: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("destinations")
    .select("organization_id")
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return row?.organization_id;
}

/** Deletes (softly, disabled) the live destinations of a workspace, at `at` (ISO 8601). */
export async function softDeleteDestinationsOfWorkspace(
  db: Db,
  workspaceId: string,
  at: string,
): Promise<void> {
  await db
    .updateTable("destinations")
    .set({ deleted_at: at, updated_at: at, enabled: 0 })
    .where("workspace_id", "=", workspaceId)
    .where("deleted_at", "is", null)
    .execute();
}
