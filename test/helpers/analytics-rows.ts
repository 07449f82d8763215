import type { ActivityRow, ClassificationRow } from "../../src/activity/activity-row.js";
import { contextLengthBucket, throughputOf } from "../../src/activity/activity-row.js";

export const ORG = "00000000-0000-4000-8000-000000000001";
export const DEFAULT_WS = "00000000-0000-4000-8000-0000000000dd";
export const CLF = "11111111-1111-4111-8111-111111111111";

let seq = 0;

/** A generation row for analytics tests (derived columns computed as ingest does). */
export function gen(over: Partial<ActivityRow> = {}): ActivityRow {
  seq += 1;
  const tokensPrompt = over.tokens_prompt ?? 100;
  const tokensCompletion = over.tokens_completion ?? 10;
  const generationTime = over.generation_time_ms === undefined ? 1000 : over.generation_time_ms;
  return {
    organization_id: ORG,
    id: `g${seq}`,
    created_at_ms: Date.parse("2026-11-17T10:00:00.000Z"),
    api_key_id: 1,
    api_key_hash: "a".repeat(64),
    workspace_id: DEFAULT_WS,
    model: "m/a",
    provider: "P",
    variant: null,
    app_id: null,
    user_id: null,
    external_user: null,
    origin: null,
    country: null,
    finish_reason: null,
    api: null,
    context_length_bucket: contextLengthBucket(tokensPrompt),
    tokens_prompt: tokensPrompt,
    tokens_completion: tokensCompletion,
    tokens_reasoning: 0,
    tokens_cached: 0,
    is_byok: false,
    streamed: false,
    cancelled: false,
    response_cached: false,
    guardrail_invoked: false,
    usage_nano: 0n,
    byok_usage_inference_nano: 0n,
    usage_upstream_nano: 0n,
    usage_cache_nano: 0n,
    usage_data_nano: 0n,
    usage_web_nano: 0n,
    usage_upstream_web_nano: 0n,
    usage_file_nano: 0n,
    usage_upstream_file_nano: 0n,
    usage_web_fetch_nano: 0n,
    usage_upstream_web_fetch_nano: 0n,
    latency_ms: 100,
    generation_time_ms: generationTime,
    throughput: throughputOf(tokensCompletion, generationTime),
    ...over,
  };
}

export function tag(
  row: ActivityRow,
  dimension_name: string,
  value: string,
  classifier_id = CLF,
): ClassificationRow {
  return {
    organization_id: row.organization_id,
    generation_id: row.id,
    workspace_id: row.workspace_id,
    created_at_ms: row.created_at_ms,
    classifier_id,
    dimension_name,
    value,
  };
}
