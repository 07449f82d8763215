import { HASH_RE } from "../lib/ids.js";

/**
 * The generation record (POST /api/v1/activity/generations) as data: one entry per wire field,
 * in the order the validator checks them (a record's problems are listed in this order). The
 * ingest validator (domain/ingest/records/validate-generations.ts), the published OpenAPI schema
 * (http/schemas/ingest.ts), the storage kinds of the activity columns (stores/activity-columns.ts)
 * and docs/generation-record.md are all produced from this table, so a field is added or changed
 * here and nowhere else. test/fuzz/generation-schema.test.ts proves the schema and the validator
 * agree.
 */

/** Storage kinds of the activity tables, shared by every engine's DDL and inserter. */
export type ColumnKind =
  "string" | "string?" | "timestamp" | "int64" | "int64?" | "bool" | "float64" | "float64?";

/** A text value must match `re` (JSON Schema: `pattern`, the same expression); `message` says how. */
export interface TextPattern {
  re: RegExp;
  message: string;
}

/**
 * How a wire value is checked and normalised. Absent means omitted or null (and "" for optional
 * text); what an absent value becomes is the field's `absent`.
 * - text: a string without control characters; required: 1..max characters; optional: at most max.
 * - timestamp: RFC 3339 with seconds and an offset, from 2000-01-01 to 24 hours after now → epoch ms.
 * - uuid: a UUID, lowercased.
 * - integer: a safe integer >= min.
 * - usd: a finite number (>= 0 unless signed), at most MAX_USD in absolute value → bigint nano-USD.
 * - millis: a finite number >= 0.
 * - flag: a boolean.
 * - classifications: a list of classifier tags (stored in generation_tags).
 */
export type WireCheck =
  | { type: "text"; max: number; pattern?: TextPattern; upper?: true }
  | { type: "timestamp" }
  | { type: "uuid" }
  | { type: "integer"; min: 0 | 1 }
  | { type: "usd"; signed: boolean }
  | { type: "millis" }
  | { type: "flag" }
  | { type: "classifications" };

/** What an absent optional value becomes. */
export type Absent =
  | "null"
  | "zero"
  | "false"
  | "none"
  /** Omitted: the key's workspace; null: null (legacy activity, the default workspace). */
  | "key-workspace"
  /** Omitted, null or "": the key's creator_user_id. */
  | "key-creator";

/** Where a field's value goes. */
export type FieldTarget =
  /** A column of `generations` (ActivityRow is derived from these: activity-row.ts). */
  | { column: string; kind: ColumnKind }
  /** The label of another field (the latest seen wins), in app_labels / user_labels. */
  | { label: "app_title" | "user_name" | "user_email" }
  /** The rows of `generation_tags`. */
  | { tags: "generation_tags" };

export interface GenerationField {
  wire: string;
  required: boolean;
  check: WireCheck;
  absent: Absent;
  target: FieldTarget;
  description: string;
}

/** Classifier tags per record. */
export const MAX_CLASSIFICATIONS = 100;
/** Records may not claim to start later than this after "now" (clock skew allowance). */
export const MAX_FUTURE_MS = 24 * 3_600_000;
export const MIN_CREATED_AT_MS = Date.UTC(2000, 0, 1);
const MAX_TEXT = 1024;

export const HASH_PATTERN: TextPattern = { re: HASH_RE, message: "must be 64 lowercase hex characters" };
export const MODEL_PATTERN: TextPattern = {
  re: /^[^\s/]+\/\S+$/,
  message: "must be a provider/model permaslug",
};
export const API_PATTERN: TextPattern = {
  re: /^[a-z][a-z0-9_.]*$/,
  message: "must be a lowercase API name (chat, responses, messages, embeddings)",
};
export const COUNTRY_PATTERN: TextPattern = {
  re: /^[A-Za-z]{2}$/,
  message: "must be an ISO 3166-1 alpha-2 code",
};

/*
 * The helpers below keep each row's column name and storage kind as literal types, so that
 * ActivityRow (activity-row.ts) is computed from this table: a field added here is a column of
 * the row type, of every engine's DDL and of every inserter, with nothing else to edit.
 */
const col = <C extends string, K extends ColumnKind>(column: C, kind: K) => ({ column, kind });

const text = <C extends string, R extends boolean>(
  wire: string,
  column: C,
  required: R,
  max: number,
  description: string,
  pattern?: TextPattern,
) => ({
  wire,
  required,
  check: (pattern ? { type: "text", max, pattern } : { type: "text", max }) as WireCheck & { type: "text" },
  absent: (required ? "none" : "null") as Absent,
  target: col(column, (required ? "string" : "string?") as R extends true ? "string" : "string?"),
  description,
});

const label = <W extends "app_title" | "user_name" | "user_email">(wire: W, description: string) => ({
  wire,
  required: false,
  check: { type: "text", max: MAX_TEXT } as WireCheck,
  absent: "null" as Absent,
  target: { label: wire },
  description,
});

const count = <C extends string>(wire: C, required: boolean, description: string) => ({
  wire,
  required,
  check: { type: "integer", min: 0 } as const,
  absent: (required ? "none" : "zero") as Absent,
  target: col(wire, "int64"),
  description,
});

/** Money: USD on the wire, integer nano-USD in the column `<wire>_nano` (a bigint in the row). */
const usd = <W extends string>(wire: W, required: boolean, description: string, signed = false) => ({
  wire,
  required,
  check: { type: "usd", signed } as const,
  absent: (required ? "none" : "zero") as Absent,
  target: col(`${wire}_nano`, "int64"),
  description,
});

const flag = <C extends string>(wire: C, description: string) => ({
  wire,
  required: false,
  check: { type: "flag" } as const,
  absent: "false" as Absent,
  target: col(wire, "bool"),
  description,
});

/** A row of the table whose helper is not above: its column and kind kept as literal types. */
const field = <C extends string, K extends ColumnKind>(
  f: Omit<GenerationField, "target"> & { target: { column: C; kind: K } },
) => f;

export const GENERATION_FIELDS = [
  text("id", "id", true, 128, "Idempotency key, unique within the organization"),
  field({
    wire: "created_at",
    required: true,
    check: { type: "timestamp" },
    absent: "none",
    target: col("created_at_ms", "timestamp"),
    description: "When the request started",
  }),
  text(
    "api_key_hash",
    "api_key_hash",
    true,
    64,
    "SHA-256 (hex) of the key that made the request",
    HASH_PATTERN,
  ),
  field({
    wire: "workspace_id",
    required: false,
    check: { type: "uuid" },
    absent: "key-workspace",
    target: col("workspace_id", "string?"),
    description: "Omitted: the key's workspace; null: legacy activity (shown in the default workspace)",
  }),
  text("model", "model", true, 256, "provider/model permaslug", MODEL_PATTERN),
  text("provider", "provider", true, 256, "The provider that served the request"),
  text("variant", "variant", false, 256, "Model variant (free, thinking, ...)"),
  field({
    wire: "app_id",
    required: false,
    check: { type: "integer", min: 1 },
    absent: "null",
    target: col("app_id", "int64?"),
    description: "The calling app",
  }),
  label("app_title", "Label of app_id; the latest seen wins"),
  field({
    wire: "user_id",
    required: false,
    check: { type: "text", max: MAX_TEXT },
    absent: "key-creator",
    target: col("user_id", "string?"),
    description: "Default (omitted, null or empty): the key's creator_user_id",
  }),
  label("user_name", "Label of user_id; the latest seen wins"),
  label("user_email", "Label of user_id; the latest seen wins"),
  text("external_user", "external_user", false, MAX_TEXT, "End-user id supplied by the caller"),
  text("origin", "origin", false, MAX_TEXT, "Where the request came from"),
  field({
    wire: "country",
    required: false,
    check: { type: "text", max: 2, pattern: COUNTRY_PATTERN, upper: true },
    absent: "null",
    target: col("country", "string?"),
    description: "ISO 3166-1 alpha-2 (stored upper case)",
  }),
  text("finish_reason", "finish_reason", false, 64, "stop, length, tool_calls, content_filter, error, ..."),
  text(
    "api",
    "api",
    false,
    32,
    "The API surface the request came through: chat, responses, messages, embeddings",
    API_PATTERN,
  ),
  count("tokens_prompt", true, "Prompt tokens"),
  count("tokens_completion", true, "Completion tokens"),
  count("tokens_reasoning", false, "Reasoning tokens"),
  count("tokens_cached", false, "Cached prompt tokens"),
  flag("is_byok", "Served with the organization's own provider key"),
  usd("usage", true, "USD charged to credits"),
  usd("byok_usage_inference", false, "USD billed to the organization's own provider key"),
  usd("usage_upstream", false, "USD"),
  usd("usage_cache", false, "USD"),
  usd("usage_web", false, "USD"),
  usd("usage_upstream_web", false, "USD"),
  usd("usage_file", false, "USD"),
  usd("usage_upstream_file", false, "USD"),
  usd("usage_web_fetch", false, "USD"),
  usd("usage_upstream_web_fetch", false, "USD"),
  usd("usage_data", false, "USD; may be negative", true),
  field({
    wire: "latency_ms",
    required: true,
    check: { type: "millis" },
    absent: "none",
    target: col("latency_ms", "float64"),
    description: "Time to first token",
  }),
  field({
    wire: "generation_time_ms",
    required: false,
    check: { type: "millis" },
    absent: "null",
    target: col("generation_time_ms", "float64?"),
    description: "Time from the first token to the last",
  }),
  flag("streamed", "Streamed response"),
  flag("cancelled", "Cancelled by the caller"),
  flag("response_cached", "Served from the response cache"),
  flag("guardrail_invoked", "A guardrail acted on the request"),
  {
    wire: "classifications",
    required: false,
    check: { type: "classifications" },
    absent: "none",
    target: { tags: "generation_tags" } as const,
    description: `Classifier tags, at most ${MAX_CLASSIFICATIONS}: classifier_id (UUID), dimension_name (snake_case, at most 64 characters), value (1 to 256 characters)`,
  },
] as const satisfies readonly GenerationField[];

/**
 * Columns of `generations` that no wire field fills: computed at ingest (ingest/records/
 * normalise-batch.ts toRow) from the organization, the key and other columns.
 */
export const DERIVED_COLUMNS = {
  organization_id: "string",
  api_key_id: "int64",
  context_length_bucket: "string",
  throughput: "float64?",
} as const satisfies Record<string, ColumnKind>;
