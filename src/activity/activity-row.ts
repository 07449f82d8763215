/**
 * A generation as the activity store holds it: the wire record of docs/generation-record.md, normalised.
 * Money is bigint nano-USD; derived columns (context_length_bucket, throughput) are computed once
 * at ingest so that every engine and the reference evaluator read the same values.
 */
export interface ActivityRow {
  organization_id: string;
  id: string;
  /** Milliseconds since the epoch, UTC. */
  created_at_ms: number;
  api_key_id: number;
  api_key_hash: string;
  /** null = legacy activity from before workspaces existed (attributed to the default workspace). */
  workspace_id: string | null;
  model: string;
  provider: string;
  variant: string | null;
  app_id: number | null;
  user_id: string | null;
  external_user: string | null;
  origin: string | null;
  country: string | null;
  finish_reason: string | null;
  context_length_bucket: string;
  tokens_prompt: number;
  tokens_completion: number;
  tokens_reasoning: number;
  tokens_cached: number;
  is_byok: boolean;
  streamed: boolean;
  cancelled: boolean;
  response_cached: boolean;
  guardrail_invoked: boolean;
  usage_nano: bigint;
  byok_usage_inference_nano: bigint;
  usage_upstream_nano: bigint;
  usage_cache_nano: bigint;
  usage_data_nano: bigint;
  usage_web_nano: bigint;
  usage_upstream_web_nano: bigint;
  usage_file_nano: bigint;
  usage_upstream_file_nano: bigint;
  usage_web_fetch_nano: bigint;
  usage_upstream_web_fetch_nano: bigint;
  latency_ms: number;
  generation_time_ms: number | null;
  /** tokens_completion / (generation_time_ms / 1000) where generation_time_ms > 0, else null. */
  throughput: number | null;
}

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

/** Columns in storage order; the DDL of every engine and the inserters follow this list. */
export const ACTIVITY_COLUMNS = [
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
] as const satisfies readonly (keyof ActivityRow)[];

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
