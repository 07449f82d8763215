import { FEEDBACK_CATEGORIES, type FeedbackCategory } from "../../activity/feedback-row.js";
import type { MoneyColumn } from "./columns.js";
import { count, feedback, flag, sum, type Measure } from "./measures.js";

export type DisplayFormat = "number" | "currency" | "percent" | "latency" | "throughput";

/**
 * How an engine value becomes a JSON number: integer counts, money (exact nano-USD, converted to
 * USD at the edge) or float (averages, percentiles, ratios; null when undefined).
 */
export type ValueKind = "integer" | "money" | "float";

export interface MetricDef {
  name: string;
  display_label: string;
  is_rate: boolean;
  display_format: DisplayFormat;
  /** Longest time_range this metric may be queried over (docs/wire-compatibility.md "Analytics limits"). */
  max_range_days: 365 | 31;
  kind: ValueKind;
  measure: Measure;
}

const m = (
  name: string,
  display_label: string,
  display_format: DisplayFormat,
  max_range_days: 365 | 31,
  measure: Measure,
): MetricDef => {
  const kind: ValueKind =
    measure.kind === "count" || measure.kind === "feedback"
      ? "integer"
      : measure.kind === "sum"
        ? display_format === "currency"
          ? "money"
          : "integer"
        : "float";
  // Averages, percentiles and ratios are not summable across rows: is_rate.
  return { name, display_label, is_rate: kind === "float", display_format, max_range_days, kind, measure };
};

const money = (name: string, label: string, range: 365 | 31, column: MoneyColumn) =>
  m(name, label, "currency", range, sum([column]));

/** `incorrect_response` → `Incorrect Response`, `api_error` → `API Error`. */
const categoryLabel = (c: FeedbackCategory): string =>
  c
    .split("_")
    .map((w) => (w === "api" ? "API" : `${w[0]!.toUpperCase()}${w.slice(1)}`))
    .join(" ");

/**
 * Gatehouse's own: feedback submitted on the selected generations (POST /generation/feedback),
 * all of it and per category, counted at the generations' time (docs/content-logging.md
 * "Counting it").
 */
const FEEDBACK_METRICS: readonly MetricDef[] = [
  m("feedback_count", "Feedback Count", "number", 365, feedback()),
  ...FEEDBACK_CATEGORIES.map((c) =>
    m(`feedback_${c}_count`, `${categoryLabel(c)} Feedback Count`, "number", 365, feedback(c)),
  ),
];

const TOTAL_USAGE = sum(["usage_nano", "byok_usage_inference_nano"]);
const TOKENS_TOTAL = sum(["tokens_prompt", "tokens_completion"]);

/** Every metric, in GET /analytics/meta order (docs/wire-compatibility.md "Metrics and dimensions"). */
export const METRICS: readonly MetricDef[] = [
  m("request_count", "Request Count", "number", 365, count()),
  m("tokens_total", "Total Tokens", "number", 365, TOKENS_TOTAL),
  m("tokens_prompt", "Prompt Tokens", "number", 365, sum(["tokens_prompt"])),
  m("tokens_completion", "Completion Tokens", "number", 365, sum(["tokens_completion"])),
  m("reasoning_tokens", "Reasoning Tokens", "number", 365, sum(["tokens_reasoning"])),
  m("cached_tokens", "Cached Tokens", "number", 365, sum(["tokens_cached"])),
  m("byok_request_count", "BYOK Request Count", "number", 365, count(flag("is_byok"))),
  m("guardrail_invoked_count", "Guardrail Invoked Count", "number", 31, count(flag("guardrail_invoked"))),
  m("response_cached_count", "Response Cached Count", "number", 31, count(flag("response_cached"))),
  m("total_usage", "Total Usage", "currency", 365, TOTAL_USAGE),
  money("byok_usage", "BYOK Usage", 365, "byok_usage_inference_nano"),
  money("credits_usage", "Credits Usage", 365, "usage_nano"),
  m("openrouter_usage", "OpenRouter Usage", "currency", 31, sum(["usage_nano"], flag("is_byok", false))),
  m("byok_fees", "BYOK Fees", "currency", 31, sum(["usage_nano"], flag("is_byok"))),
  money("usage_upstream", "Upstream Usage", 365, "usage_upstream_nano"),
  money("usage_cache", "Cache Usage", 365, "usage_cache_nano"),
  money("usage_data", "Data Usage", 365, "usage_data_nano"),
  money("usage_web", "Web Search Usage", 365, "usage_web_nano"),
  money("usage_upstream_web", "Upstream Web Search Usage", 365, "usage_upstream_web_nano"),
  money("usage_file", "File Usage", 31, "usage_file_nano"),
  money("usage_upstream_file", "Upstream File Usage", 31, "usage_upstream_file_nano"),
  money("usage_web_fetch", "Web Fetch Usage", 31, "usage_web_fetch_nano"),
  money("usage_upstream_web_fetch", "Upstream Web Fetch Usage", 31, "usage_upstream_web_fetch_nano"),
  m("avg_latency", "Average Latency", "latency", 31, { kind: "avg", column: "latency_ms" }),
  m("p50_latency", "P50 Latency", "latency", 31, { kind: "quantile", column: "latency_ms", q: 0.5 }),
  m("p90_latency", "P90 Latency", "latency", 31, { kind: "quantile", column: "latency_ms", q: 0.9 }),
  m("p99_latency", "P99 Latency", "latency", 31, { kind: "quantile", column: "latency_ms", q: 0.99 }),
  m("avg_throughput", "Average Throughput", "throughput", 31, { kind: "avg", column: "throughput" }),
  m("p50_throughput", "P50 Throughput", "throughput", 31, { kind: "quantile", column: "throughput", q: 0.5 }),
  m("p90_throughput", "P90 Throughput", "throughput", 31, { kind: "quantile", column: "throughput", q: 0.9 }),
  m("p99_throughput", "P99 Throughput", "throughput", 31, {
    kind: "quantile",
    column: "throughput",
    q: 0.99,
  }),
  m("cache_hit_rate", "Cache Hit Rate", "percent", 365, {
    kind: "ratio",
    num: sum(["tokens_cached"]),
    den: sum(["tokens_prompt"]),
  }),
  m("guardrail_invoked_rate", "Guardrail Invoked Rate", "percent", 31, {
    kind: "ratio",
    num: count(flag("guardrail_invoked")),
    den: count(),
  }),
  m("response_cached_rate", "Response Cached Rate", "percent", 31, {
    kind: "ratio",
    num: count(flag("response_cached")),
    den: count(),
  }),
  // nano-USD / tokens / 1000 = USD / tokens × 1,000,000.
  m("blended_cost_per_million_tokens", "Blended Cost per Million Tokens", "currency", 365, {
    kind: "ratio",
    num: TOTAL_USAGE,
    den: TOKENS_TOTAL,
    divideBy: 1000,
  }),
  ...FEEDBACK_METRICS,
];

export const METRIC_BY_NAME: ReadonlyMap<string, MetricDef> = new Map(METRICS.map((d) => [d.name, d]));
