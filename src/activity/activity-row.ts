import { DERIVED_COLUMNS, GENERATION_FIELDS, type ColumnKind } from "./generation-fields.js";

/** The value a storage kind holds in a row (money columns aside: bigint, below). */
interface KindValue {
  string: string;
  "string?": string | null;
  timestamp: number;
  int64: number;
  "int64?": number | null;
  bool: boolean;
  float64: number;
  "float64?": number | null;
}

type WireField = (typeof GENERATION_FIELDS)[number];
type ColumnField = Extract<WireField, { target: { column: string } }>;

/** The columns the wire fields fill: money (a `usd` check) as bigint nano-USD. */
type WireColumns = {
  [F in ColumnField as F["target"]["column"]]: F["check"] extends { type: "usd" }
    ? bigint
    : KindValue[F["target"]["kind"]];
};

type DerivedColumns = {
  -readonly [C in keyof typeof DERIVED_COLUMNS]: KindValue[(typeof DERIVED_COLUMNS)[C]];
};

/**
 * A generation as the activity store holds it: the wire record of docs/generation-record.md,
 * normalised. Computed from the field table (generation-fields.ts): one column per wire field
 * that has one, plus the DERIVED_COLUMNS (organization_id, api_key_id, context_length_bucket,
 * throughput), computed once at ingest so that every engine and the reference evaluator read the
 * same values. Money is bigint nano-USD; `created_at_ms` is milliseconds since the epoch, UTC;
 * `workspace_id` null is legacy activity (the default workspace).
 */
export type ActivityRow = { [C in keyof (WireColumns & DerivedColumns)]: (WireColumns & DerivedColumns)[C] };

/** A column of `generations`. */
export type ColumnName = Extract<keyof ActivityRow, string>;

/** The columns of one storage kind (a derived column counts with its kind). */
export type ColumnsOfKind<K extends ColumnKind> =
  | Extract<ColumnField, { target: { kind: K } }>["target"]["column"]
  | {
      [C in keyof typeof DERIVED_COLUMNS]: (typeof DERIVED_COLUMNS)[C] extends K ? C : never;
    }[keyof typeof DERIVED_COLUMNS];

/** Money columns (integer nano-USD, bigint in the row): the fields with a `usd` check. */
export type MoneyColumnName = Extract<ColumnField, { check: { type: "usd" } }>["target"]["column"];

/** The money columns, at run time (decoders read them as bigint). */
export const MONEY_COLUMNS: ReadonlySet<string> = new Set(
  GENERATION_FIELDS.flatMap((f) => (f.check.type === "usd" && "column" in f.target ? [f.target.column] : [])),
);

/** One classifier tag of a generation (docs/generation-record.md `classifications`). */
export interface ClassificationRow {
  organization_id: string;
  generation_id: string;
  workspace_id: string | null;
  created_at_ms: number;
  classifier_id: string;
  dimension_name: string;
  value: string;
}

/**
 * The columns of the first schema, in its storage order, which existing activity files keep
 * (DuckDB's appender writes by position). Not a second definition of the columns: a column added
 * to the field table goes after these (ACTIVITY_COLUMNS), and every engine adds it to an existing
 * table (its DDL's ADD COLUMN); the type check fails the build when one named here is no longer in
 * the table. An added column must be nullable: rows stored before it have no value.
 */
export const FIRST_STORAGE_ORDER = [
  "organization_id",
  "id",
  "created_at_ms",
  "api_key_id",
  "api_key_hash",
  "workspace_id",
  "model",
  "provider",
  "variant",
  "app_id",
  "user_id",
  "external_user",
  "origin",
  "country",
  "finish_reason",
  "context_length_bucket",
  "tokens_prompt",
  "tokens_completion",
  "tokens_reasoning",
  "tokens_cached",
  "is_byok",
  "streamed",
  "cancelled",
  "response_cached",
  "guardrail_invoked",
  "usage_nano",
  "byok_usage_inference_nano",
  "usage_upstream_nano",
  "usage_cache_nano",
  "usage_data_nano",
  "usage_web_nano",
  "usage_upstream_web_nano",
  "usage_file_nano",
  "usage_upstream_file_nano",
  "usage_web_fetch_nano",
  "usage_upstream_web_fetch_nano",
  "latency_ms",
  "generation_time_ms",
  "throughput",
] as const satisfies readonly ColumnName[];

/** Every column of the field table, in storage order: the first schema's, then any added since. */
export const ACTIVITY_COLUMNS: readonly ColumnName[] = [
  ...FIRST_STORAGE_ORDER,
  ...[
    ...GENERATION_FIELDS.flatMap((f): ColumnName[] => ("column" in f.target ? [f.target.column] : [])),
    ...(Object.keys(DERIVED_COLUMNS) as ColumnName[]),
  ].filter((c) => !(FIRST_STORAGE_ORDER as readonly string[]).includes(c)),
];

/** `0-1K` (< 1,000), `1K-4K`, `4K-16K`, `16K-64K`, `64K-128K`, `128K+` over tokens_prompt. */
export function contextLengthBucket(tokensPrompt: number): string {
  if (tokensPrompt < 1_000) return "0-1K";
  if (tokensPrompt < 4_000) return "1K-4K";
  if (tokensPrompt < 16_000) return "4K-16K";
  if (tokensPrompt < 64_000) return "16K-64K";
  if (tokensPrompt < 128_000) return "64K-128K";
  return "128K+";
}

export function throughputOf(tokensCompletion: number, generationTimeMs: number | null): number | null {
  return generationTimeMs !== null && generationTimeMs > 0
    ? tokensCompletion / (generationTimeMs / 1000)
    : null;
}
