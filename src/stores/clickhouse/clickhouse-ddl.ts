import {
  ADDED_GENERATION_COLUMNS,
  FEEDBACK_COLUMNS,
  FIRST_GENERATION_COLUMNS,
  TAG_COLUMNS,
  type ColumnKind,
  type StorageColumn,
} from "../activity-columns.js";

const TYPE: Record<ColumnKind, string> = {
  string: "String",
  "string?": "Nullable(String)",
  timestamp: "DateTime64(3, 'UTC')",
  int64: "Int64",
  "int64?": "Nullable(Int64)",
  bool: "Bool",
  float64: "Float64",
  "float64?": "Nullable(Float64)",
};

/** Few distinct values: dictionary-encoded (transparent to queries and results). */
const LOW_CARDINALITY = new Set([
  "model",
  "provider",
  "country",
  "finish_reason",
  "context_length_bucket",
  "category",
]);

const columnType = (c: StorageColumn<never>): string =>
  LOW_CARDINALITY.has(c.name) && c.kind === "string"
    ? "LowCardinality(String)"
    : LOW_CARDINALITY.has(c.name)
      ? "LowCardinality(Nullable(String))"
      : TYPE[c.kind];

const table = (name: string, cols: readonly StorageColumn<never>[], orderBy: string): string =>
  `CREATE TABLE IF NOT EXISTS ${name} (\n  ${cols.map((c) => `${c.name} ${columnType(c)}`).join(",\n  ")}\n)` +
  `\nENGINE = MergeTree\nPARTITION BY toYYYYMM(created_at)\nORDER BY (${orderBy})`;

/**
 * ClickHouse schema: MergeTree partitioned by month and ordered for organization + time, so that
 * every analytics query (always one organization, always a time range) and the ingest existence
 * check read only the granules they need.
 */
export const CLICKHOUSE_DDL: readonly string[] = [
  table("generations", FIRST_GENERATION_COLUMNS, "organization_id, created_at, id"),
  // Columns added since the first schema, in order (rows stored before hold null).
  ...ADDED_GENERATION_COLUMNS.map(
    (c) => `ALTER TABLE generations ADD COLUMN IF NOT EXISTS ${c.name} ${columnType(c)}`,
  ),
  table("generation_tags", TAG_COLUMNS, "organization_id, created_at, generation_id, classifier_id"),
  // Feedback at its generation's time (src/domain/generation-feedback/ writes it from the record store).
  table("generation_feedback", FEEDBACK_COLUMNS, "organization_id, created_at, generation_id, feedback_id"),
];
