/**
 * Columns of the activity store's `generations` table that the model may reference. The compiler
 * emits identifiers only from this list (never from a request), so it is the whole identifier
 * surface of analytics SQL. `created_at` is the stored timestamp of ActivityRow.created_at_ms.
 */
/** Integer id columns that dimensions group on. */
export const ID_COLUMNS = ["api_key_id", "app_id"] as const;

export const TOKEN_COLUMNS = [
  "tokens_prompt",
  "tokens_completion",
  "tokens_reasoning",
  "tokens_cached",
] as const;

export const MONEY_COLUMNS = [
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
] as const;

export const FLOAT_COLUMNS = ["latency_ms", "throughput"] as const;

export const FLAG_COLUMNS = ["is_byok", "response_cached", "guardrail_invoked"] as const;

export const TEXT_COLUMNS = [
  "id",
  "workspace_id",
  "model",
  "provider",
  "variant",
  "user_id",
  "external_user",
  "origin",
  "country",
  "finish_reason",
  "context_length_bucket",
] as const;

export type IdColumn = (typeof ID_COLUMNS)[number];
export type TokenColumn = (typeof TOKEN_COLUMNS)[number];
export type MoneyColumn = (typeof MONEY_COLUMNS)[number];
export type FloatColumn = (typeof FLOAT_COLUMNS)[number];
export type FlagColumn = (typeof FLAG_COLUMNS)[number];
export type TextColumn = (typeof TEXT_COLUMNS)[number];
/** Summable columns: exact 64-bit integers. */
export type SumColumn = TokenColumn | MoneyColumn;
export type GenerationColumn =
  IdColumn | SumColumn | FloatColumn | FlagColumn | TextColumn | "organization_id" | "created_at";
