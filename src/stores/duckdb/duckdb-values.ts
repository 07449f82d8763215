import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBDataChunk,
  DuckDBTimestampValue,
  TIMESTAMP,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";
import type { ColumnKind, StorageColumn } from "../activity-columns.js";

/* Activity columns as DuckDB types and values: what the writer (duckdb-writer.ts) binds. */

/** DuckDB's vector size: one data chunk holds at most this many rows. */
const CHUNK_ROWS = 2048;
/**
 * Joins ids into one bound string (one native value instead of a list of thousands): a control
 * character that ingest never accepts inside an id.
 */
export const ID_SEPARATOR = "\u0001";

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

export const tsValue = (ms: number): DuckDBTimestampValue => new DuckDBTimestampValue(BigInt(ms) * 1000n);

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
export function insertSqlOf<Row>(table: string, cols: readonly StorageColumn<Row>[]): string {
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
export async function appendRows<Row>(
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
