import type { ExclusiveActivityWriter } from "../../stores/activity-store.js";
import type { Db } from "../../stores/record-store.js";
import { inflightOf, removeInflight } from "./inflight-repo.js";

const LOOKUP_CHUNK = 1_000;

/**
 * Settles the in-flight markers that the previous ingest protocol left for batches that did not
 * finish (a crash, or a failed commit, between the activity commit and the record-store commit):
 * deletes from the activity store the rows of the marked ids that the record store did not
 * accept, then the marker. Ids it did accept (by that batch or another) keep their rows. The
 * ingest buffer runs it once, before its first write (ingest-buffer.ts). Returns the number of
 * markers settled.
 */
export async function recoverInflight(db: Db, writer: ExclusiveActivityWriter): Promise<number> {
  const markers = await inflightOf(db, writer.owner);
  for (const m of markers) {
    const accepted = new Set<string>();
    for (let i = 0; i < m.ids.length; i += LOOKUP_CHUNK) {
      const rows = await db
        .selectFrom("generations_seen")
        .select("id")
        .where("organization_id", "=", m.organizationId)
        .where("id", "in", m.ids.slice(i, i + LOOKUP_CHUNK))
        .execute();
      for (const r of rows) accepted.add(r.id);
    }
    const orphans = m.ids.filter((id) => !accepted.has(id));
    await writer.discard(m.organizationId, orphans, m.minMs, m.maxMs);
    await removeInflight(db, m.token);
  }
  return markers.length;
}
