import type { Db } from "../../stores/record-store.js";

/** Ids per statement: 2 bound values each, well under SQLite's and PostgreSQL's limits. */
const CHUNK = 2_000;

/**
 * Claims generation ids for an organization: inserts those not yet seen and returns them. An id
 * already claimed (by an earlier batch, or by a concurrent one that committed first: the primary
 * key makes the second wait and then skip) is not returned. Call inside the ingest transaction,
 * with distinct ids.
 */
export async function claimGenerationIds(
  db: Db,
  organizationId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const claimed = new Set<string>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const rows = await db
      .insertInto("generations_seen")
      .values(ids.slice(i, i + CHUNK).map((id) => ({ organization_id: organizationId, id })))
      .onConflict((oc) => oc.columns(["organization_id", "id"]).doNothing())
      .returning("id")
      .execute();
    for (const r of rows) claimed.add(r.id);
  }
  return claimed;
}
