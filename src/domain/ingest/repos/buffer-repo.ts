import { chunksOf } from "../../../lib/chunks.js";
import { QueryTemplate } from "../../../stores/query-template.js";
import type { Db } from "../../../stores/record-store.js";

/** A batch accepted but not yet in the activity store (migration 004). */
export interface BufferedBatch {
  seq: number;
  rowCount: number;
  /** Names the batch's rows in the ingest log. */
  token: string;
}

/** Adds a batch (inside the transaction that accepts it). */
export async function appendBuffer(
  db: Db,
  b: { owner: string; organizationId: string; rowCount: number; token: string },
): Promise<void> {
  await append.execute(db, "", b.owner, b.organizationId, b.rowCount, b.token);
}

/*
 * The statements every accepted batch and every flush run, compiled once (query-template.ts):
 * the gateway accepts one batch per recorder flush.
 */
const append = new QueryTemplate(
  (db: Db, _shape, owner: string, organizationId: string, rowCount: number, token: string) =>
    db
      .insertInto("ingest_buffer")
      .values({ owner, organization_id: organizationId, row_count: rowCount, token })
      .compile(),
);

const oldest = new QueryTemplate((db: Db, _shape, owner: string, maxBatches: number) =>
  db
    .selectFrom("ingest_buffer")
    .select(["seq", "row_count", "token"])
    .where("owner", "=", owner)
    .orderBy("seq")
    .limit(maxBatches)
    .compile(),
);

/** Lists up to this long are deleted by a compiled statement (one per length). */
const COMPILED_DELETE_MAX = 64;

const deleteSeqs = new QueryTemplate((db: Db, _shape, ...seqs: number[]) =>
  db.deleteFrom("ingest_buffer").where("seq", "in", seqs).compile(),
);

/** The oldest buffered batches of an activity store, up to `maxRows` rows (at least one batch). */
export async function readBuffer(
  db: Db,
  owner: string,
  maxRows: number,
  maxBatches: number,
): Promise<BufferedBatch[]> {
  const { rows } = await oldest.execute(db, "", owner, maxBatches);
  const out: BufferedBatch[] = [];
  let total = 0;
  for (const r of rows) {
    const rowCount = Number(r.row_count); // bigint from SQLite
    if (out.length > 0 && total + rowCount > maxRows) break;
    total += rowCount;
    out.push({ seq: Number(r.seq), rowCount, token: r.token });
  }
  return out;
}

/** Whether an activity store has buffered batches numbered up to `through` (of one organization). */
export async function hasBuffered(
  db: Db,
  owner: string,
  through: number,
  organizationId?: string,
): Promise<boolean> {
  const row = await db
    .selectFrom("ingest_buffer")
    .select("seq")
    .where("owner", "=", owner)
    .where("seq", "<=", through)
    .$if(organizationId !== undefined, (q) => q.where("organization_id", "=", organizationId as string))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Sequence numbers and tokens of an activity store's buffered batches. */
export async function bufferedOf(db: Db, owner: string): Promise<{ seq: number; token: string }[]> {
  const rows = await db
    .selectFrom("ingest_buffer")
    .select(["seq", "token"])
    .where("owner", "=", owner)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), token: r.token }));
}

/** The highest buffered sequence number of an activity store (of one organization; 0 when none). */
export async function lastBuffered(db: Db, owner: string, organizationId?: string): Promise<number> {
  const row = await db
    .selectFrom("ingest_buffer")
    .select((eb) => eb.fn.max("seq").as("last"))
    .where("owner", "=", owner)
    .$if(organizationId !== undefined, (q) => q.where("organization_id", "=", organizationId as string))
    .executeTakeFirst();
  return row?.last === null || row?.last === undefined ? 0 : Number(row.last);
}

const CHUNK = 1_000;

export async function deleteBuffered(db: Db, seqs: readonly number[]): Promise<void> {
  for (const chunk of chunksOf(seqs, CHUNK)) {
    if (chunk.length <= COMPILED_DELETE_MAX) await deleteSeqs.execute(db, String(chunk.length), ...chunk);
    else await db.deleteFrom("ingest_buffer").where("seq", "in", chunk).execute();
  }
}
