import {
  DuckDBTimestampValue,
  TIMESTAMP,
  type DuckDBConnection,
  type DuckDBInstance,
} from "@duckdb/node-api";

/**
 * Physical layout of the embedded activity store's `generations` table, so that an analytics
 * filter on a key (or a workspace's keys) skips most of the data by DuckDB's row-group zone maps
 * (min/max per column and row group of ~122,880 rows) instead of scanning every row of the period.
 *
 * Ingest appends rows in arrival order: every row group of a period holds every key, so a key
 * filter prunes nothing. Compaction rewrites sealed rows (created_at older than `sealMs`) in
 * chunks of about `chunkRows` rows, sorted by (organization_id, api_key_id, created_at), within the
 * same table: the chunk's rows are inserted again in that order and the arrival-order originals
 * deleted, in ONE DuckDB transaction (a crash or kill -9 at any point leaves either the old rows or
 * the new ones, never both, never neither). Every reader and writer of the table (analytics,
 * existence checks, reconcile, discard) is unaffected: the table holds the same rows, once.
 *
 * Two levels, so that the unsorted tail stays small without making chunks small: level 1 writes
 * chunks of `chunkRows`; below that, level 0 sorts the tail in chunks of a quarter of it (which
 * level 1 later merges into a full chunk: recent rows are sorted twice). On the 10M-row bench the
 * level-0 chunks took the key query from 12.6 to 9.9 ms.
 *
 * A watermark per level (`activity_compaction`, written in the same transaction) marks how far
 * rows were compacted; the next chunk starts there. Rows that arrive after their time range was
 * compacted (late records, an import of old history) stay in arrival order: correct, only not
 * clustered. Deleted originals are reclaimed at the next checkpoint (their row groups are dropped,
 * their blocks reused), which compaction runs right after each chunk; when a checkpoint cannot run
 * (other transactions open), the next chunk waits for one, so the file grows by at most one chunk.
 */
export interface CompactionOptions {
  /** Rows per compacted chunk (at least this many sealed rows must be waiting); 0 = never compact. */
  chunkRows: number;
  /** Rows whose created_at is older than this (ms) are sealed: eligible for compaction. */
  sealMs: number;
}

/** The compaction knobs of the store (config: ACTIVITY_COMPACTION_*). */
export interface CompactionSettings extends CompactionOptions {
  /** How often the background compactor looks for a ready chunk; 0 = only when asked. */
  intervalMs: number;
}

/** Off unless configured (tests, tools); the server passes its config (on by default). */
export const COMPACTION_OFF: CompactionSettings = { chunkRows: 1_000_000, sealMs: 3_600_000, intervalMs: 0 };

export interface CompactedChunk {
  /** 1: a full chunk; 0: a quarter chunk of the tail (merged into a full one later). */
  level: 0 | 1;
  rows: number;
  /** The chunk's created_at range [fromMs, toMs); fromMs null = from the beginning. */
  fromMs: number | null;
  toMs: number;
  elapsedMs: number;
}

const HOUR_MS = 3_600_000;
/** Before any watermark: 0001-01-01T00:00:00Z (ingest accepts nothing earlier). */
const BEGINNING_MS = -62_135_596_800_000;

export const COMPACTION_DDL: readonly string[] = [
  "CREATE TABLE IF NOT EXISTS activity_compaction (level INTEGER NOT NULL, sealed_before TIMESTAMP NOT NULL)",
];

const ts = (ms: number) => new DuckDBTimestampValue(BigInt(ms) * 1000n);
const msOf = (v: unknown): number => (v instanceof Date ? v.getTime() : Number(v));

/** Where each level's next chunk starts (BEGINNING_MS before its first chunk). */
async function watermarks(conn: DuckDBConnection): Promise<[level0: number, level1: number]> {
  const r = await conn.runAndReadAll(
    `SELECT max(sealed_before) FILTER (WHERE level = 0) AS l0, max(sealed_before) FILTER (WHERE level = 1) AS l1
     FROM activity_compaction`,
  );
  const row = r.getRowObjectsJS()[0] ?? {};
  const at = (v: unknown) => (v === null || v === undefined ? BEGINNING_MS : msOf(v));
  const l1 = at(row.l1);
  return [Math.max(at(row.l0), l1), l1];
}

/**
 * The next chunk's end: the first hour boundary (at most `sealedBeforeMs`) below which at least
 * `chunkRows` uncompacted rows lie; null when fewer are waiting.
 */
async function chunkEnd(
  conn: DuckDBConnection,
  fromMs: number,
  sealedBeforeMs: number,
  chunkRows: number,
): Promise<number | null> {
  const r = await conn.runAndReadAll(
    `SELECT epoch_ms(date_trunc('hour', created_at)) AS h, count(*) AS n FROM generations
     WHERE created_at >= $lo AND created_at < $hi GROUP BY h ORDER BY h`,
    { lo: ts(fromMs), hi: ts(sealedBeforeMs) },
    { lo: TIMESTAMP, hi: TIMESTAMP },
  );
  let total = 0;
  for (const row of r.getRowObjectsJS()) {
    total += Number(row.n);
    if (total >= chunkRows) return Math.min(sealedBeforeMs, Number(row.h) + HOUR_MS);
  }
  return null;
}

/** Runs a checkpoint; false when DuckDB cannot run one now (other transactions are open). */
async function tryCheckpoint(conn: DuckDBConnection): Promise<boolean> {
  try {
    await conn.run("CHECKPOINT");
    return true;
  } catch {
    return false;
  }
}

/**
 * Compacts one chunk if enough sealed rows are waiting; null otherwise. The caller serialises it
 * with the store's other deleting writers (discard), so that their deletes never conflict.
 */
export async function compactChunk(
  conn: DuckDBConnection,
  opts: CompactionOptions,
  nowMs: number,
  level: 0 | 1 = 1,
): Promise<CompactedChunk | null> {
  const chunkRows = level === 1 ? opts.chunkRows : Math.ceil(opts.chunkRows / 4);
  if (chunkRows <= 0) return null;
  const started = performance.now();
  const [level0, level1] = await watermarks(conn);
  const fromMs = level === 1 ? level1 : level0;
  const toMs = await chunkEnd(conn, fromMs, nowMs - opts.sealMs, chunkRows);
  if (toMs === null) return null;
  const range = "created_at >= $lo AND created_at < $hi";
  const values = { lo: ts(fromMs), hi: ts(toMs) };
  const types = { lo: TIMESTAMP, hi: TIMESTAMP };
  await conn.run("BEGIN TRANSACTION");
  try {
    // Rows this transaction inserts get row ids above every committed row's: the originals are
    // exactly the rows of the range at or below the largest row id seen before the insert.
    const top = await conn.runAndReadAll("SELECT coalesce(max(rowid), -1) AS top FROM generations");
    const maxRowId = BigInt(top.getRowObjectsJS()[0]?.top as bigint | number);
    const inserted = await conn.run(
      `INSERT INTO generations SELECT * FROM generations WHERE ${range}
       ORDER BY organization_id, api_key_id, created_at, id`,
      values,
      types,
    );
    const deleted = await conn.run(
      `DELETE FROM generations WHERE ${range} AND rowid <= ${maxRowId}`,
      values,
      types,
    );
    const rows = Number(inserted.rowsChanged);
    if (rows !== Number(deleted.rowsChanged)) {
      throw new Error(`compaction: inserted ${rows} rows but deleted ${deleted.rowsChanged}`);
    }
    await conn.run("DELETE FROM activity_compaction");
    await conn.run(
      "INSERT INTO activity_compaction VALUES (0, $l0), (1, $l1)",
      { l0: ts(Math.max(level0, toMs)), l1: ts(level === 1 ? toMs : level1) },
      { l0: TIMESTAMP, l1: TIMESTAMP },
    );
    await conn.run("COMMIT");
    return {
      level,
      rows,
      fromMs: fromMs === BEGINNING_MS ? null : fromMs,
      toMs,
      elapsedMs: performance.now() - started,
    };
  } catch (err) {
    await conn.run("ROLLBACK").catch(() => undefined);
    throw err;
  }
}

export interface Compactor {
  /** Compacts every chunk that is ready now (after a checkpoint reclaimed the previous one's space). */
  runNow(nowMs?: number, chunkRows?: number): Promise<CompactedChunk[]>;
  /** Stops the timer and interrupts a compaction in progress (rolled back); idempotent. */
  stop(): Promise<void>;
}

/**
 * Compaction on its own connection: on a timer every `intervalMs` (0 = only when asked), each
 * chunk under `serialised` (the store's queue of deleting writers), its checkpoints under
 * `quiescent` as well (the store's writer connection idle: DuckDB refuses a CHECKPOINT while
 * another transaction has open writes). Appends go on while a chunk is rewritten. A failed run is
 * retried at the next tick; `onError` hears about it (never with row data).
 */
export async function startCompactor(
  instance: DuckDBInstance,
  opts: CompactionSettings & {
    serialised: <T>(fn: () => Promise<T>) => Promise<T>;
    quiescent: <T>(fn: () => Promise<T>) => Promise<T>;
    onError?: (err: unknown) => void;
  },
): Promise<Compactor> {
  const conn = await instance.connect();
  for (const ddl of COMPACTION_DDL) await conn.run(ddl);
  let stopped = false;
  let reclaimed = true; // the previous chunk's deleted rows were checkpointed away
  let running: Promise<CompactedChunk[]> | null = null;

  // One chunk per turn of the writer queue, so that a backlog (the first start after an import)
  // never holds discard for more than a chunk. Resolves undefined when no checkpoint could reclaim
  // the previous chunk's rows yet (then the next chunk waits for a later run), or when stopped.
  const step = (nowMs: number, chunkRows: number, level: 0 | 1) =>
    opts.serialised(async (): Promise<CompactedChunk | null | undefined> => {
      if (stopped) return undefined;
      const checkpoint = () => opts.quiescent(() => tryCheckpoint(conn));
      if (!reclaimed && !(reclaimed = await checkpoint())) return undefined;
      const chunk = await compactChunk(conn, { chunkRows, sealMs: opts.sealMs }, nowMs, level);
      if (chunk) reclaimed = await checkpoint();
      return chunk;
    });

  const runOnce = async (nowMs: number, chunkRows: number): Promise<CompactedChunk[]> => {
    const done: CompactedChunk[] = [];
    for (const level of [1, 0] as const) {
      while (!stopped) {
        const chunk = await step(nowMs, chunkRows, level);
        if (chunk === undefined) return done;
        if (chunk === null) break;
        done.push(chunk);
      }
    }
    return done;
  };

  const runNow = (nowMs = Date.now(), chunkRows = opts.chunkRows): Promise<CompactedChunk[]> => {
    if (stopped) return Promise.resolve([]);
    const run = (running ?? Promise.resolve([])).then(
      () => runOnce(nowMs, chunkRows),
      () => runOnce(nowMs, chunkRows),
    );
    running = run;
    return run;
  };

  let ticking = false;
  const timer =
    opts.intervalMs > 0 && opts.chunkRows > 0
      ? setInterval(() => {
          if (ticking) return;
          ticking = true;
          runNow()
            .catch((err: unknown) => opts.onError?.(err))
            .finally(() => (ticking = false));
        }, opts.intervalMs)
      : null;
  timer?.unref();

  return {
    runNow,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      if (timer) clearInterval(timer);
      conn.interrupt();
      await running?.catch(() => undefined);
      conn.closeSync();
    },
  };
}
