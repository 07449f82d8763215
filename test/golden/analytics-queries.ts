import type { QueryRequest } from "../../src/analytics/plan/query-request.js";

export const CLF = "11111111-1111-4111-8111-111111111111";
export const NOW = new Date("2026-11-18T12:00:00.000Z");
export const CTX = {
  organizationId: "00000000-0000-4000-8000-000000000001",
  defaultWorkspaceId: "00000000-0000-4000-8000-0000000000dd",
};
const range = { start: "2026-11-01T00:00:00Z", end: "2026-11-18T00:00:00Z" };

/** Representative queries whose SQL is kept as golden files, one per dialect. */
export const GOLDEN_QUERIES: Record<string, QueryRequest> = {
  "totals-every-metric-kind": {
    metrics: [
      "request_count",
      "tokens_total",
      "byok_request_count",
      "total_usage",
      "openrouter_usage",
      "avg_latency",
      "p90_latency",
      "p99_throughput",
      "cache_hit_rate",
      "guardrail_invoked_rate",
      "blended_cost_per_million_tokens",
    ],
    time_range: range,
  },
  "daily-series-by-model-and-workspace": {
    metrics: ["request_count", "total_usage"],
    dimensions: ["model", "workspace"],
    granularity: "day",
    time_range: range,
  },
  "hourly-group-limit": {
    metrics: ["tokens_prompt"],
    dimensions: ["api_key_id"],
    granularity: "hour",
    group_limit: 3,
    limit: 50,
    time_range: { start: "2026-11-17T00:00:00Z", end: "2026-11-18T00:00:00Z" },
  },
  "every-filter-operator": {
    metrics: ["request_count"],
    dimensions: ["user"],
    filters: [
      { field: "model", operator: "eq", value: "openai/gpt-4o" },
      { field: "provider", operator: "neq", value: "x' OR 1=1 --" },
      { field: "app", operator: "gt", value: 3 },
      { field: "app", operator: "lte", value: 300 },
      { field: "country", operator: "gte", value: "A" },
      { field: "country", operator: "lt", value: "Z" },
      { field: "variant", operator: "in", value: ["free", "thinking"], include_unset: true },
      { field: "finish_reason", operator: "not_in", value: ["error"] },
      { field: "workspace", operator: "eq", value: "00000000-0000-4000-8000-0000000000dd" },
    ],
    time_range: range,
  },
  "weekly-order-by-request-count-asc": {
    metrics: ["total_usage"],
    dimensions: ["model"],
    granularity: "week",
    group_limit: 10,
    order_by: { field: "request_count", direction: "asc" },
    time_range: range,
  },
  "monthly-series-no-dimensions": {
    metrics: ["credits_usage", "byok_usage"],
    granularity: "month",
    time_range: { start: "2026-01-01T00:00:00Z", end: "2026-11-18T00:00:00Z" },
  },
  "classifier-named-dimensions-with-nulls": {
    metrics: ["request_count", "p50_latency"],
    classifier_dimensions: {
      classifier_id: CLF,
      dimension_names: ["topic", "language"],
      include_nulls: true,
    },
    time_range: range,
  },
  "classifier-pairs-and-filters": {
    metrics: ["request_count"],
    dimensions: ["model"],
    classifier_dimensions: { classifier_id: CLF },
    classifier_filters: {
      classifier_id: CLF,
      filters: [
        { field: "topic", operator: "in", value: ["billing", "sales"] },
        { field: "language", operator: "neq", value: "de" },
      ],
    },
    time_range: range,
  },
  "minute-window": {
    metrics: ["request_count"],
    granularity: "minute",
    time_range: { start: "2026-11-18T09:00:00Z", end: "2026-11-18T12:00:00Z" },
  },
  "feedback-by-api-daily-with-classifier": {
    metrics: ["feedback_count", "feedback_latency_count", "request_count"],
    dimensions: ["api"],
    granularity: "day",
    classifier_dimensions: { classifier_id: CLF, dimension_names: ["topic"] },
    group_limit: 5,
    order_by: { field: "feedback_count", direction: "desc" },
    time_range: range,
  },
};
