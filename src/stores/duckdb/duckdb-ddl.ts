import {
  ADDED_GENERATION_COLUMNS,
  FEEDBACK_COLUMNS,
  FIRST_GENERATION_COLUMNS,
  TAG_COLUMNS,
  type ColumnKind,
  type StorageColumn,
} from "../activity-columns.js";

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
  table("generations", FIRST_GENERATION_COLUMNS),
  // Columns added since the first schema, in order: a new file ends up with the same columns in
  // the same order as an old one (the appender writes by position).
  ...ADDED_GENERATION_COLUMNS.map(
    (c) => `ALTER TABLE generations ADD COLUMN IF NOT EXISTS ${c.name} ${TYPE[c.kind]}`,
  ),
  table("generation_tags", TAG_COLUMNS),
  // Feedback submissions, written from the record store's queue (src/domain/generation-feedback/).
  table("generation_feedback", FEEDBACK_COLUMNS),
  // Record-store buffer rows already written here (src/domain/ingest/pipeline/ingest-buffer.ts).
  "CREATE TABLE IF NOT EXISTS ingest_applied (seq BIGINT NOT NULL)",
];
