import type { Db } from "../../stores/record-store.js";

/**
 * In-flight markers of ingest batches written to a single-writer activity store (embedded
 * DuckDB). The ingest fast path writes activity rows without checking whether the store already
 * holds their ids; that is sound because such a row can only exist without its id in
 * generations_seen when a batch's activity commit happened and its record-store commit did not.
 * A marker, committed before the activity commit and deleted in the record-store transaction
 * that accepts the batch, names every such batch; recovery (recover-inflight.ts) deletes the
 * rows of its unaccepted ids before any further batch is written.
 */
export interface InflightMarker {
  token: string;
  /** ExclusiveActivityWriter.owner of the store written. */
  owner: string;
  organizationId: string;
  minMs: number;
  maxMs: number;
  ids: string[];
}

/** Commits a marker (call outside the batch's transaction: it must outlive a rollback). */
export async function addInflight(db: Db, m: InflightMarker): Promise<void> {
  await db
    .insertInto("ingest_inflight")
    .values({
      token: m.token,
      owner: m.owner,
      organization_id: m.organizationId,
      min_ms: m.minMs,
      max_ms: m.maxMs,
      ids: JSON.stringify(m.ids),
    })
    .execute();
}

/** Deletes a marker: inside the transaction that accepts the batch, or by recovery. */
export async function removeInflight(db: Db, token: string): Promise<void> {
  await db.deleteFrom("ingest_inflight").where("token", "=", token).execute();
}

/** The markers of one activity store. */
export async function inflightOf(db: Db, owner: string): Promise<InflightMarker[]> {
  const rows = await db.selectFrom("ingest_inflight").selectAll().where("owner", "=", owner).execute();
  return rows.map((r) => ({
    token: r.token,
    owner: r.owner,
    organizationId: r.organization_id,
    minMs: Number(r.min_ms),
    maxMs: Number(r.max_ms),
    ids: JSON.parse(r.ids) as string[],
  }));
}
