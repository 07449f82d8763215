import { GetAnalyticsMetaResponse$inboundSchema } from "@openrouter/sdk/models/operations";
import { describe, expect, it } from "vitest";
import { DIMENSIONS } from "../../src/analytics/model/dimensions.js";
import { bucketStart } from "../../src/analytics/model/granularities.js";
import { analyticsMeta } from "../../src/analytics/model/meta.js";
import { METRICS } from "../../src/analytics/model/metrics.js";

/** The published lists (docs/wire-compatibility.md "Metrics and dimensions"). */
const METRIC_NAMES = [
  "request_count",
  "tokens_total",
  "tokens_prompt",
  "tokens_completion",
  "reasoning_tokens",
  "cached_tokens",
  "byok_request_count",
  "guardrail_invoked_count",
  "response_cached_count",
  "total_usage",
  "byok_usage",
  "credits_usage",
  "openrouter_usage",
  "byok_fees",
  "usage_upstream",
  "usage_cache",
  "usage_data",
  "usage_web",
  "usage_upstream_web",
  "usage_file",
  "usage_upstream_file",
  "usage_web_fetch",
  "usage_upstream_web_fetch",
  "avg_latency",
  "p50_latency",
  "p90_latency",
  "p99_latency",
  "avg_throughput",
  "p50_throughput",
  "p90_throughput",
  "p99_throughput",
  "cache_hit_rate",
  "guardrail_invoked_rate",
  "response_cached_rate",
  "blended_cost_per_million_tokens",
  // Gatehouse's own: feedback on the generations (docs/content-logging.md "Counting it").
  "feedback_count",
  "feedback_latency_count",
  "feedback_incoherence_count",
  "feedback_incorrect_response_count",
  "feedback_formatting_count",
  "feedback_billing_count",
  "feedback_api_error_count",
  "feedback_other_count",
];
const THIRTY_ONE_DAY_METRICS = [
  "guardrail_invoked_count",
  "response_cached_count",
  "openrouter_usage",
  "byok_fees",
  "usage_file",
  "usage_upstream_file",
  "usage_web_fetch",
  "usage_upstream_web_fetch",
  "avg_latency",
  "p50_latency",
  "p90_latency",
  "p99_latency",
  "avg_throughput",
  "p50_throughput",
  "p90_throughput",
  "p99_throughput",
  "guardrail_invoked_rate",
  "response_cached_rate",
];
const DIMENSION_NAMES = [
  "model",
  "variant",
  "api_key_id",
  "user",
  "workspace",
  "app",
  "generation_id",
  "provider",
  "origin",
  "country",
  "finish_reason",
  "external_user",
  "context_length_bucket",
  // Gatehouse's own: the API surface a generation came through (docs/analytics.md).
  "api",
];

describe("analytics model", () => {
  it("lists every metric and dimension of compatibility-facts §B, then Gatehouse's feedback metrics and api", () => {
    expect(METRICS.map((m) => m.name)).toEqual(METRIC_NAMES);
    expect(DIMENSIONS.map((d) => d.name)).toEqual(DIMENSION_NAMES);
  });

  it("range caps follow §B: 31 days for the listed metrics and per-generation dimensions", () => {
    expect(METRICS.filter((m) => m.max_range_days === 31).map((m) => m.name)).toEqual(THIRTY_ONE_DAY_METRICS);
    expect(DIMENSIONS.filter((d) => d.max_range_days === 31).map((d) => d.name)).toEqual([
      "generation_id",
      "provider",
      "origin",
      "country",
      "finish_reason",
      "external_user",
      "context_length_bucket",
    ]);
  });

  it("formats: currency for the cost metrics, percent for rates; is_rate for non-summable metrics", () => {
    const by = (f: string) => METRICS.filter((m) => m.display_format === f).map((m) => m.name);
    expect(by("currency")).toHaveLength(15); // 14 cost metrics + blended cost
    expect(by("percent")).toEqual(["cache_hit_rate", "guardrail_invoked_rate", "response_cached_rate"]);
    for (const m of METRICS) expect(m.is_rate).toBe(m.kind === "float");
    expect(METRICS.find((m) => m.name === "request_count")!.display_label).toBe("Request Count");
  });

  it("feedback metrics: summable integer counts over 365 days, one per category, labelled by category", () => {
    const feedback = METRICS.filter((m) => m.measure.kind === "feedback");
    expect(feedback.map((m) => m.name)).toEqual(METRIC_NAMES.filter((n) => n.startsWith("feedback_")));
    for (const m of feedback) {
      expect(m).toMatchObject({
        kind: "integer",
        is_rate: false,
        display_format: "number",
        max_range_days: 365,
      });
    }
    expect(feedback.map((m) => m.display_label)).toEqual([
      "Feedback Count",
      "Latency Feedback Count",
      "Incoherence Feedback Count",
      "Incorrect Response Feedback Count",
      "Formatting Feedback Count",
      "Billing Feedback Count",
      "API Error Feedback Count",
      "Other Feedback Count",
    ]);
  });

  it("unset buckets: variant, user, app, origin, country, finish_reason, external_user, api", () => {
    expect(DIMENSIONS.filter((d) => d.has_unset).map((d) => d.name)).toEqual([
      "variant",
      "user",
      "app",
      "origin",
      "country",
      "finish_reason",
      "external_user",
      "api",
    ]);
    expect(DIMENSIONS.filter((d) => d.label !== "none").map((d) => [d.name, d.label])).toEqual([
      ["api_key_id", "api_key"],
      ["user", "user"],
      ["workspace", "workspace"],
      ["app", "app"],
    ]);
  });

  it("GET /analytics/meta body parses with the official SDK and matches the published labels", () => {
    const meta = analyticsMeta();
    const parsed = GetAnalyticsMetaResponse$inboundSchema.parse({ data: meta });
    expect(parsed.data.metrics).toHaveLength(METRIC_NAMES.length);
    expect(meta.operators).toEqual([
      { name: "eq", value_type: "scalar" },
      { name: "neq", value_type: "scalar" },
      { name: "gt", value_type: "scalar" },
      { name: "gte", value_type: "scalar" },
      { name: "lt", value_type: "scalar" },
      { name: "lte", value_type: "scalar" },
      { name: "in", value_type: "array" },
      { name: "not_in", value_type: "array" },
    ]);
    expect(meta.granularities.map((g) => g.name)).toEqual(["minute", "hour", "day", "week", "month"]);
    expect(meta.dimensions[0]).toEqual({ name: "model", display_label: "Model" });
    expect(meta.granularities[2]).toEqual({ name: "day", display_label: "Day" });
  });

  it("buckets: weeks start on Monday, months on the 1st (UTC)", () => {
    const at = (s: string) => Date.parse(s);
    expect(bucketStart("week", at("2026-11-08T23:59:59.999Z"))).toBe(at("2026-11-02T00:00:00Z")); // Sunday
    expect(bucketStart("week", at("2026-11-09T00:00:00Z"))).toBe(at("2026-11-09T00:00:00Z")); // Monday
    expect(bucketStart("month", at("2024-02-29T13:00:00Z"))).toBe(at("2024-02-01T00:00:00Z"));
    expect(bucketStart("hour", at("2026-11-18T12:59:59.999Z"))).toBe(at("2026-11-18T12:00:00Z"));
    expect(bucketStart("minute", at("2026-11-18T12:34:56Z"))).toBe(at("2026-11-18T12:34:00Z"));
  });
});
