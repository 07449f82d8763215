import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
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
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";
import type { ActivityRow, ClassificationRow } from "../../activity/activity-row.js";
import {
  byOrganization,
  firstPerKey,
  GENERATION_COLUMNS,
  TAG_COLUMNS,
  type ColumnKind,
  type StorageColumn,
} from "../activity-columns.js";
import {
  ActivityTimeoutError,
  type ActivityStore,
  type BoundQuery,
  type QueryOptions,
} from "../activity-store.js";
import { DUCKDB_DDL } from "./duckdb-ddl.js";

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

/** Appends rows through data chunks (columnar, one native call per column and chunk). */
async function appendRows<Row>(
  conn: DuckDBConnection,
  table: string,
  cols: readonly StorageColumn<Row>[],
  rows: readonly Row[],
): Promise<void> {
  if (rows.length === 0) return;
  const appender = await conn.createAppender(table);
  try {
    const types = cols.map((c) => TYPE_OF[c.kind]);
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      const slice = rows.slice(start, start + CHUNK_ROWS);
      const chunk = DuckDBDataChunk.create(types, slice.length);
      cols.forEach((c, j) => {
        const values = new Array<DuckDBValue>(slice.length);
        for (let i = 0; i < slice.length; i++) values[i] = cell(c.kind, (slice[i] as Row)[c.field]);
        chunk.setColumnValues(j, values);
      });
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

export interface DuckDbStoreOptions {
  /** A file path, or ":memory:". */
  path: string;
}

/**
 * The embedded activity store: one DuckDB database (a file in the data directory). Writes go
 * through one connection, serialised, inside one transaction per batch (generations and tags land
 * together or not at all). Queries run on their own connections (a small pool), so a slow
 * analytics query never blocks ingest, and a timed-out query is interrupted and its connection
 * discarded.
 */
export async function openDuckDbActivityStore(opts: DuckDbStoreOptions): Promise<ActivityStore> {
  if (opts.path !== ":memory:") mkdirSync(dirname(opts.path), { recursive: true });
  const instance = await DuckDBInstance.create(opts.path);
  const writer = await instance.connect();
  for (const ddl of DUCKDB_DDL) await writer.run(ddl);

  let closed = false;
  const idle: DuckDBConnection[] = [];
  const busy = new Set<DuckDBConnection>();
  let writeQueue: Promise<unknown> = Promise.resolve();

  const serialised = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = writeQueue.then(fn, fn);
    writeQueue = run.catch(() => undefined);
    return run;
  };

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
    const uniqueRows = firstPerKey(rows, (r) => `${r.organization_id}\u0000${r.id}`);
    const newRows: ActivityRow[] = [];
    for (const [org, g] of byOrganization(uniqueRows)) {
      const have = await existing(
        "generations",
        "id",
        org,
        g.minMs,
        g.maxMs,
        g.rows.map((r) => r.id),
      );
      for (const r of g.rows) if (!have.has(r.id)) newRows.push(r);
    }
    const newTags: ClassificationRow[] = [];
    for (const [org, g] of byOrganization(tags)) {
      const have = await existing("generation_tags", "generation_id", org, g.minMs, g.maxMs, [
        ...new Set(g.rows.map((t) => t.generation_id)),
      ]);
      for (const t of g.rows) if (!have.has(t.generation_id)) newTags.push(t);
    }
    if (newRows.length === 0 && newTags.length === 0) return;
    await writer.run("BEGIN TRANSACTION");
    try {
      await appendRows(writer, "generations", GENERATION_COLUMNS, newRows);
      await appendRows(writer, "generation_tags", TAG_COLUMNS, newTags);
      await writer.run("COMMIT");
    } catch (err) {
      await writer.run("ROLLBACK").catch(() => undefined);
      throw err;
    }
  }

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
    const conn = await acquire();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      conn.interrupt();
    }, opts.timeoutMs);
    try {
      const { values, types } = bindParams(q);
      const reader = await conn.runAndReadAll(q.sql, values, types);
      if (timedOut) throw new ActivityTimeoutError();
      return reader.getRowObjectsJS().map((row) => {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(row)) out[k] = plain(v);
        return out;
      });
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
    query,
    ping: async () => {
      const conn = await acquire();
      try {
        await conn.run("SELECT 1");
      } finally {
        release(conn, true);
      }
    },
    close: async () => {
      if (closed) return;
      await serialised(async () => undefined);
      closed = true;
      for (const c of busy) c.interrupt();
      for (const c of idle.splice(0)) c.closeSync();
      writer.closeSync();
      instance.closeSync();
    },
  };
}
