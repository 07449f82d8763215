import { chunksOf } from "../../../lib/chunks.js";
import { sql } from "kysely";
import type { DialectCaps } from "../../../stores/dialect.js";
import type { Db } from "../../../stores/record-store.js";
import { jsonTexts } from "../../../stores/sqlite/json-rows.js";
import { QueryTemplate } from "../../../stores/query-template.js";

/** Ids per statement: 2 bound values each, well under SQLite's and PostgreSQL's limits. */
const CHUNK = 2_000;

/**
 * Claims generation ids for an organization: inserts those not yet seen and returns them. An id
 * already claimed (by an earlier batch, or by a concurrent one that committed first: the primary
 * key makes the second wait and then skip) is not returned. Call inside the ingest transaction,
 * with distinct ids. On SQLite the ids go in as one JSON parameter (one statement per batch).
 */
const claimJson = new QueryTemplate((db: Db, _shape, organizationId: string, list: string) =>
  sql<{ id: string }>`
      INSERT INTO generations_seen (organization_id, id)
      SELECT ${organizationId}, value FROM json_each(${list}) WHERE true
      ON CONFLICT (organization_id, id) DO NOTHING
      RETURNING id`.compile(db),
);

export async function claimGenerationIds(
  db: Db,
  organizationId: string,
  ids: readonly string[],
  caps?: DialectCaps,
): Promise<Set<string>> {
  const claimed = new Set<string>();
  const list = caps?.bulkRowsAsJson && ids.length > 0 ? jsonTexts(ids) : null;
  if (list !== null) {
    const { rows } = await claimJson.execute(db, "", organizationId, list);
    for (const r of rows) claimed.add(r.id);
    return claimed;
  }
  for (const chunk of chunksOf(ids, CHUNK)) {
    const rows = await db
      .insertInto("generations_seen")
      .values(chunk.map((id) => ({ organization_id: organizationId, id })))
      .onConflict((oc) => oc.columns(["organization_id", "id"]).doNothing())
      .returning("id")
      .execute();
    for (const r of rows) claimed.add(r.id);
  }
  return claimed;
}
