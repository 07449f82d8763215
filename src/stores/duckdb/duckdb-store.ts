import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBDataChunk,
  DuckDBInstance,
  DuckDBTimestampValue,
  LIST,
  TIMESTAMP,
  VARCHAR,
  listValue,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBResultReader,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";
import type { ActivityRow, ClassificationRow } from "../../activity/activity-row.js";
import {
  GENERATION_COLUMNS,
  TAG_COLUMNS,
  unseenOf,
  type ColumnKind,
  type StorageColumn,
} from "../activity-columns.js";
import {
  ActivityTimeoutError,
  type ActivityStore,
  type BoundQuery,
  type ExclusiveActivityWriter,
  type QueryOptions,
} from "../activity-store.js";
import {
  COMPACTION_OFF,
  startCompactor,
  type CompactedChunk,
  type CompactionSettings,
} from "./duckdb-compaction.js";
import { DUCKDB_DDL } from "./duckdb-ddl.js";
import { mergeEncoded, type EncodedActivity, type EncodedTable } from "../column-texts.js";

/**
 * WAL size that triggers a checkpoint. DuckDB's default (16 MB, about 40 ingest batches of 1,000
 * records) makes checkpoints dominate ingest: each one rewrites the table's open row groups, so
 * they cost more as the table grows (0.1-2 s each, ~16 ms per batch amortised, measured with
 * bench:ingest's records); at 128 MB ingest CPU per batch halves and the file stays smaller.
 * The price: up to 128 MB of WAL on disk and in memory, replayed at start after a crash (~1.5 s).
 */
const CHECKPOINT_THRESHOLD = "128MB";
/** DuckDB's vector size: one data chunk holds at most this many rows. */
const CHUNK_ROWS = 2048;
/** Idle read connections kept for reuse; more are opened while queries run concurrently. */
const MAX_IDLE_READERS = 4;
/**
 * Joins ids into one bound string (one native value instead of a list of thousands): a control
 * character that ingest never accepts inside an id.
 */
const ID_SEPARATOR = "\u0001";
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const TYPE_OF: Record<ColumnKind, DuckDBType> = {
  string: VARCHAR,
  "string?": VARCHAR,
  timestamp: TIMESTAMP,
  int64: BIGINT,
  "int64?": BIGINT,
  bool: BOOLEAN,
  float64: DOUBLE,
  "float64?": DOUBLE,
};

const tsValue = (ms: number): DuckDBTimestampValue => new DuckDBTimestampValue(BigInt(ms) * 1000n);

function cell(kind: ColumnKind, v: unknown): DuckDBValue {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case "timestamp":
      return tsValue(v as number);
    case "int64":
    case "int64?":
      return typeof v === "bigint" ? v : BigInt(v as number);
    default:
      return v as DuckDBValue;
  }
}

const SQL_TYPE: Record<ColumnKind, string> = {
  string: "VARCHAR",
  "string?": "VARCHAR",
  timestamp: "TIMESTAMP",
  int64: "BIGINT",
  "int64?": "BIGINT",
  bool: "BOOLEAN",
  float64: "DOUBLE",
  "float64?": "DOUBLE",
};

/**
 * INSERT of rows given as one text parameter per column ($1..$n: the column's values joined by
 * U+0001, NULL as U+0002), split, cast and inserted by the engine: the conversion runs on the
 * engine's threads, and the statement runs asynchronously, so the event loop neither converts
 * values one native call at a time nor blocks while a concurrent checkpoint holds the table
 * (an appender's flush does). Doubles round-trip exactly (shortest decimal, correctly rounded
 * parse); integers and money (bigint) are exact decimal text.
 */
function insertSqlOf<Row>(table: string, cols: readonly StorageColumn<Row>[]): string {
  const inner = cols.map((_c, j) => `unnest(string_split($${j + 1}, chr(1))) AS v${j}`).join(", ");
  const outer = cols
    .map((c, j) => {
      let e = `v${j}`;
      if (c.kind.endsWith("?")) e = `nullif(${e}, chr(2))`;
      if (c.kind === "timestamp") e = `epoch_ms(${e}::BIGINT)`;
      else if (c.kind !== "string" && c.kind !== "string?") e = `${e}::${SQL_TYPE[c.kind]}`;
      return e;
    })
    .join(", ");
  return `INSERT INTO ${table} (${cols.map((c) => c.name).join(", ")}) SELECT ${outer} FROM (SELECT ${inner})`;
}

/**
 * Appends rows through data chunks (columnar, one native call per column and chunk; strings one
 * per value), inside the connection's open transaction.
 */
async function appendRows<Row>(
  conn: DuckDBConnection,
  table: string,
  cols: readonly StorageColumn<Row>[],
  rows: readonly Row[],
): Promise<void> {
  if (rows.length === 0) return;
  const types = cols.map((c) => TYPE_OF[c.kind]);
  const appender = await conn.createAppender(table);
  try {
    const values = new Array<DuckDBValue>(Math.min(CHUNK_ROWS, rows.length));
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      const n = Math.min(CHUNK_ROWS, rows.length - start);
      const chunk = DuckDBDataChunk.create(types, n);
      values.length = n;
      for (let j = 0; j < cols.length; j++) {
        const { kind, field } = cols[j] as StorageColumn<Row>;
        for (let i = 0; i < n; i++) values[i] = cell(kind, (rows[start + i] as Row)[field]);
        chunk.setColumnValues(j, values);
      }
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/** Binds a parameter with an explicit type where inference would be wrong (bigint, lists). */
function bindParams(q: BoundQuery): {
  values: Record<string, DuckDBValue>;
  types: Record<string, DuckDBType>;
} {
  const used = new Set([...q.sql.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
  const values: Record<string, DuckDBValue> = {};
  const types: Record<string, DuckDBType> = {};
  for (const [name, v] of Object.entries(q.params)) {
    if (!used.has(name)) continue;
    if (Array.isArray(v)) {
      const items = v as readonly (string | number)[];
      const allStrings = items.every((x) => typeof x === "string");
      const allInts = items.every((x) => typeof x === "number" && Number.isSafeInteger(x));
      const itemType = allStrings ? VARCHAR : allInts ? BIGINT : DOUBLE;
      values[name] = listValue(items.map((x) => (itemType === BIGINT ? BigInt(x) : x)));
      types[name] = LIST(itemType);
    } else if (typeof v === "bigint") {
      values[name] = v;
      if (v >= INT64_MIN && v <= INT64_MAX) types[name] = BIGINT;
    } else {
      values[name] = v as DuckDBValue;
    }
  }
  return { values, types };
}

/** Engine values → the port's representation (see ActivityStore.query). */
function plain(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(plain);
  return v;
}

/**
 * A result as row objects in the port's representation, converted column by column (the
 * engine's per-row object conversion costs ~0.7 ms for 600 rows; by column ~0.1 ms). Columns with
 * the same name: the last one wins, as in row objects.
 */
function rowsOf(reader: DuckDBResultReader): Record<string, unknown>[] {
  const names = reader.columnNames();
  const columns = reader
    .getColumnsJS()
    .map((col) => (col.some((v) => v instanceof Date || Array.isArray(v)) ? col.map(plain) : col));
  const rows = new Array<Record<string, unknown>>(reader.currentRowCount);
  for (let i = 0; i < rows.length; i++) {
    const out: Record<string, unknown> = {};
    for (let j = 0; j < names.length; j++) out[names[j] as string] = (columns[j] as unknown[])[i];
    rows[i] = out;
  }
  return rows;
}

export interface DuckDbStoreOptions {
  /** A file path, or ":memory:". */
  path: string;
  /** DuckDB's memory_limit (`2GB`); past it DuckDB spills to disk. Default: DuckDB's (80% of RAM). */
  memoryLimit?: string | null;
  /** DuckDB's worker threads. Default: DuckDB's (one per core). */
  threads?: number | null;
  /** Background compaction (duckdb-compaction.ts); default: only when compact() is called. */
  compaction?: CompactionSettings;
}

/** The embedded store, with its layout maintenance exposed for tools, benchmarks and tests. */
export interface DuckDbActivityStore extends ActivityStore {
  /** Compacts the chunks ready now (see duckdb-compaction.ts); chunkRows overrides the setting. */
  compact(opts?: { nowMs?: number; chunkRows?: number }): Promise<CompactedChunk[]>;
}

/**
 * The embedded activity store: one DuckDB database (a file in the data directory). Writes go
 * through one connection, serialised, inside one transaction per batch (generations and tags land
 * together or not at all). Queries run on their own connections (a small pool), so a slow
 * analytics query never blocks ingest, and a timed-out query is interrupted and its connection
 * discarded.
 */
export async function openDuckDbActivityStore(opts: DuckDbStoreOptions): Promise<DuckDbActivityStore> {
  if (opts.path !== ":memory:") mkdirSync(dirname(opts.path), { recursive: true });
  const instance = await DuckDBInstance.create(opts.path, {
    checkpoint_threshold: CHECKPOINT_THRESHOLD,
    ...(opts.memoryLimit ? { memory_limit: opts.memoryLimit } : {}),
    ...(opts.threads ? { threads: String(opts.threads) } : {}),
  });
  const writer = await instance.connect();
  for (const ddl of DUCKDB_DDL) await writer.run(ddl);

  let closed = false;
  const idle: DuckDBConnection[] = [];
  const busy = new Set<DuckDBConnection>();
  const queue = () => {
    let tail: Promise<unknown> = Promise.resolve();
    return <T>(fn: () => Promise<T>): Promise<T> => {
      const run = tail.then(fn, fn);
      tail = run.catch(() => undefined);
      return run;
    };
  };
  /** The writer connection: one statement or transaction at a time. */
  const serialised = queue();
  /**
   * Writers that delete rows of `generations` (discard, compaction): one at a time, so that their
   * deletes never conflict. Appends (the flusher, insert) do not wait for them: DuckDB's appends
   * never conflict, so a compaction chunk (seconds for 1M rows) does not hold ingest up.
   */
  const deleting = queue();

  const compactor = await startCompactor(instance, {
    ...(opts.compaction ?? COMPACTION_OFF),
    serialised: deleting,
    quiescent: serialised,
    onError: (err) =>
      process.stderr.write(
        `gatehouse: activity compaction failed (retried later): ${(err as Error).message}\n`,
      ),
  });

  const assertOpen = () => {
    if (closed) throw new Error("activity store is closed");
  };

  async function existing(
    table: "generations" | "generation_tags",
    idColumn: "id" | "generation_id",
    org: string,
    minMs: number,
    maxMs: number,
    ids: readonly string[],
  ): Promise<Set<string>> {
    const reader = await writer.runAndReadAll(
      `SELECT DISTINCT ${idColumn} AS id FROM ${table}
       WHERE organization_id = $org AND created_at BETWEEN $lo AND $hi
         AND ${idColumn} IN (SELECT unnest(string_split($ids, $sep)))`,
      { org, lo: tsValue(minMs), hi: tsValue(maxMs), ids: ids.join(ID_SEPARATOR), sep: ID_SEPARATOR },
      { org: VARCHAR, lo: TIMESTAMP, hi: TIMESTAMP, ids: VARCHAR, sep: VARCHAR },
    );
    return new Set(reader.getRowObjectsJS().map((r) => r.id as string));
  }

  async function insert(rows: readonly ActivityRow[], tags: readonly ClassificationRow[]): Promise<void> {
    assertOpen();
    const { rows: newRows, tags: newTags } = await unseenOf(rows, tags, existing);
    if (newRows.length === 0 && newTags.length === 0) return;
    await inWriterTransaction(async () => {
      await appendRows(writer, "generations", GENERATION_COLUMNS, newRows);
      await appendRows(writer, "generation_tags", TAG_COLUMNS, newTags);
    });
  }

  /** The writer's INSERT statements, prepared once (see insertSqlOf). */
  const statements = new Map<string, DuckDBPreparedStatement>();
  const GENERATIONS_INSERT = insertSqlOf("generations", GENERATION_COLUMNS);
  const TAGS_INSERT = insertSqlOf("generation_tags", TAG_COLUMNS);

  async function insertTexts(sql: string, texts: readonly string[]): Promise<void> {
    let st = statements.get(sql);
    if (!st) statements.set(sql, (st = await writer.prepare(sql)));
    for (let j = 0; j < texts.length; j++) st.bindVarchar(j + 1, texts[j] as string);
    await st.run();
  }

  async function writeTable<Row>(
    table: "generations" | "generation_tags",
    cols: readonly StorageColumn<Row>[],
    sql: string,
    t: EncodedTable<Row>,
  ): Promise<void> {
    if (t.count === 0) return;
    if (t.texts) await insertTexts(sql, t.texts);
    else await appendRows(writer, table, cols, t.rows);
  }

  /** fn inside one transaction of the writer connection (call it serialised). */
  async function inWriterTransaction(fn: () => Promise<void>): Promise<void> {
    await writer.run("BEGIN TRANSACTION");
    try {
      await fn();
      await writer.run("COMMIT");
    } catch (err) {
      await writer.run("ROLLBACK").catch(() => undefined);
      throw err;
    }
  }

  const seqList = (seqs: readonly number[]) => ({
    values: { seqs: seqs.join(",") },
    types: { seqs: VARCHAR },
  });

  /** Batches and their buffer sequence numbers, in one transaction (ExclusiveActivityWriter.apply). */
  async function apply(batches: readonly EncodedActivity[], seqs: readonly number[]): Promise<void> {
    assertOpen();
    const { generations, tags } = mergeEncoded(batches);
    await serialised(() =>
      inWriterTransaction(async () => {
        await writeTable("generations", GENERATION_COLUMNS, GENERATIONS_INSERT, generations);
        await writeTable("generation_tags", TAG_COLUMNS, TAGS_INSERT, tags);
        if (seqs.length > 0) {
          const { values, types } = seqList(seqs);
          await writer.run(
            "INSERT INTO ingest_applied SELECT unnest(string_split($seqs, ','))::BIGINT",
            values,
            types,
          );
        }
      }),
    );
  }

  async function applied(): Promise<number[]> {
    assertOpen();
    return serialised(async () => {
      const reader = await writer.runAndReadAll("SELECT seq FROM ingest_applied ORDER BY seq");
      return reader.getColumnsJS()[0]?.map((v) => Number(v)) ?? [];
    });
  }

  async function forget(seqs: readonly number[]): Promise<void> {
    assertOpen();
    if (seqs.length === 0) return;
    const { values, types } = seqList(seqs);
    await serialised(() =>
      writer.run(
        "DELETE FROM ingest_applied WHERE seq IN (SELECT unnest(string_split($seqs, ','))::BIGINT)",
        values,
        types,
      ),
    );
  }

  /** Awaited by every read first (ExclusiveActivityWriter.beforeRead). */
  let readBarrier: ((organizationId?: string) => Promise<void>) | null = null;

  const exclusive: ExclusiveActivityWriter = {
    owner:
      opts.path === ":memory:"
        ? `duckdb:memory:${randomUUID()}`
        : `duckdb:${hostname()}:${resolve(opts.path)}`,
    session: randomUUID(),
    logDir: opts.path === ":memory:" ? null : `${resolve(opts.path)}.ingest-log`,
    apply,
    applied,
    forget,
    beforeRead: (barrier) => {
      readBarrier = barrier;
    },
  };

  async function acquire(): Promise<DuckDBConnection> {
    assertOpen();
    const conn = idle.pop() ?? (await instance.connect());
    busy.add(conn);
    return conn;
  }

  function release(conn: DuckDBConnection, healthy: boolean): void {
    busy.delete(conn);
    if (healthy && !closed && idle.length < MAX_IDLE_READERS) idle.push(conn);
    else conn.closeSync();
  }

  async function query(q: BoundQuery, opts: QueryOptions): Promise<Record<string, unknown>[]> {
    if (readBarrier) await readBarrier(opts.organizationId);
    const conn = await acquire();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      conn.interrupt();
    }, opts.timeoutMs);
    try {
      const { values, types } = bindParams(q);
      // Prepared afresh each time, on purpose: DuckDB plans with the column statistics of the
      // moment (a sort sizes its string keys by the longest value seen), and a statement kept
      // across appends returned longer new strings cut short (seen with DuckDB 1.5.6).
      const reader = await conn.runAndReadAll(q.sql, values, types);
      if (timedOut) throw new ActivityTimeoutError();
      return rowsOf(reader);
    } catch (err) {
      if (timedOut) throw new ActivityTimeoutError();
      throw err;
    } finally {
      clearTimeout(timer);
      // An interrupted connection is not reused: its interrupt flag must not hit the next query.
      release(conn, !timedOut);
    }
  }

  return {
    dialect: "duckdb",
    insert: (rows, tags) => serialised(() => insert(rows, tags)),
    exclusive,
    query,
    ping: async () => {
      const conn = await acquire();
      try {
        await conn.run("SELECT 1");
      } finally {
        release(conn, true);
      }
    },
    compact: (o = {}) => {
      assertOpen();
      return compactor.runNow(o.nowMs, o.chunkRows);
    },
    close: async () => {
      if (closed) return;
      await compactor.stop();
      await deleting(async () => undefined);
      await serialised(async () => undefined);
      closed = true;
      for (const c of busy) c.interrupt();
      for (const c of idle.splice(0)) c.closeSync();
      writer.closeSync();
      instance.closeSync();
    },
  };
}
