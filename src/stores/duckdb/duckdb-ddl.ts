import { GENERATION_COLUMNS, TAG_COLUMNS, type ColumnKind, type StorageColumn } from "../activity-columns.js";

const TYPE: Record<ColumnKind, string> = {
  string: "VARCHAR NOT NULL",
  "string?": "VARCHAR",
  timestamp: "TIMESTAMP NOT NULL",
  int64: "BIGINT NOT NULL",
  "int64?": "BIGINT",
  bool: "BOOLEAN NOT NULL",
  float64: "DOUBLE NOT NULL",
  "float64?": "DOUBLE",
};

const table = (name: string, cols: readonly StorageColumn<never>[]): string =>
  `CREATE TABLE IF NOT EXISTS ${name} (\n  ${cols.map((c) => `${c.name} ${TYPE[c.kind]}`).join(",\n  ")}\n)`;

/**
 * DuckDB schema. No primary key: an ART index would slow every append and hold memory; ids are
 * unique because the record store decides acceptance and the inserter skips ids already present
 * (checked by organization and created_at range, which zone maps prune). Timestamps are UTC
 * TIMESTAMP values with millisecond precision.
 */
export const DUCKDB_DDL: readonly string[] = [
  table("generations", GENERATION_COLUMNS),
  table("generation_tags", TAG_COLUMNS),
  // Record-store buffer rows already written here (src/domain/ingest/pipeline/ingest-buffer.ts).
  "CREATE TABLE IF NOT EXISTS ingest_applied (seq BIGINT NOT NULL)",
];
