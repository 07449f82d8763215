import { describe, expect, it } from "vitest";
import { buildPlan } from "../../src/analytics/plan/build-plan.js";
import type { QueryRequest } from "../../src/analytics/plan/query-request.js";
import { DomainError } from "../../src/domain/errors.js";

const NOW = new Date("2026-11-18T12:00:00.000Z");
const CLF = "11111111-1111-4111-8111-111111111111";
const DAY = 86_400_000;
const range = (days: number) => ({
  start: new Date(NOW.getTime() - days * DAY).toISOString(),
  end: NOW.toISOString(),
});

function rejects(req: Partial<QueryRequest>): string {
  try {
    buildPlan({ metrics: ["request_count"], ...req }, NOW);
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).status).toBe(400);
    return (e as DomainError).message;
  }
  throw new Error("expected a 400");
}

describe("analytics plan: every rule is a 400 naming the field", () => {
  const cases: [string, Partial<QueryRequest>, RegExp][] = [
    ["no metrics", { metrics: [] }, /^metrics: at least 1 item/],
    ["unknown metric", { metrics: ["request_count", "nope"] }, /^metrics\[1\]: unknown metric "nope"/],
    ["duplicate metric", { metrics: ["request_count", "request_count"] }, /^metrics\[1\]: duplicate metric/],
    [
      "hostile metric name",
      { metrics: ["request_count; DROP TABLE generations"] },
      /^metrics\[0\]: unknown metric/,
    ],
    ["three dimensions", { dimensions: ["model", "provider", "app"] }, /^dimensions: at most 2 items/],
    ["unknown dimension", { dimensions: ['model" --'] }, /^dimensions\[0\]: unknown dimension/],
    ["duplicate dimension", { dimensions: ["model", "model"] }, /^dimensions\[1\]: duplicate dimension/],
    [
      "21 filters",
      { filters: Array.from({ length: 21 }, () => ({ field: "model", operator: "eq", value: "a" })) },
      /^filters: at most 20 items/,
    ],
    [
      "filter on unknown field",
      { filters: [{ field: "x)", operator: "eq", value: "a" }] },
      /^filters\[0\]\.field: unknown dimension/,
    ],
    [
      "unknown operator",
      { filters: [{ field: "model", operator: "like", value: "a" }] },
      /^filters\[0\]\.operator: must be one of eq, neq/,
    ],
    [
      "array for scalar operator",
      { filters: [{ field: "model", operator: "eq", value: ["a"] }] },
      /^filters\[0\]\.value: must be a string or number for operator eq/,
    ],
    [
      "scalar for array operator",
      { filters: [{ field: "model", operator: "in", value: "a" }] },
      /^filters\[0\]\.value: must be an array for operator in/,
    ],
    [
      "empty array",
      { filters: [{ field: "model", operator: "not_in", value: [] }] },
      /^filters\[0\]\.value: at least 1 item/,
    ],
    [
      "number for a string dimension",
      { filters: [{ field: "model", operator: "eq", value: 12 }] },
      /^filters\[0\]\.value: must be a string/,
    ],
    [
      "string for app",
      { filters: [{ field: "app", operator: "in", value: [1, "2"] }] },
      /^filters\[0\]\.value\[1\]: must be an integer app id/,
    ],
    [
      "fraction for app",
      { filters: [{ field: "app", operator: "eq", value: 1.5 }] },
      /^filters\[0\]\.value: must be an integer app id/,
    ],
    [
      "bad key reference",
      { filters: [{ field: "api_key_id", operator: "eq", value: "abc" }] },
      /^filters\[0\]\.value: must be a numeric key id or a 64-character/,
    ],
    [
      "bad workspace",
      { filters: [{ field: "workspace", operator: "eq", value: "default" }] },
      /^filters\[0\]\.value: must be a workspace UUID/,
    ],
    [
      "include_unset on eq",
      { filters: [{ field: "variant", operator: "eq", value: "free", include_unset: true }] },
      /^filters\[0\]\.include_unset: applies only to operators in and not_in/,
    ],
    [
      "include_unset without unset bucket",
      { filters: [{ field: "model", operator: "in", value: ["a"], include_unset: true }] },
      /^filters\[0\]\.include_unset: dimension model has no unset bucket/,
    ],
    [
      "minute precision",
      { time_range: { start: "2026-11-01T00:00Z", end: "2026-11-02T00:00:00Z" } },
      /^time_range\.start: must be a UTC timestamp with seconds/,
    ],
    [
      "offset instead of Z",
      { time_range: { start: "2026-11-01T00:00:00Z", end: "2026-11-02T00:00:00+01:00" } },
      /^time_range\.end: must be a UTC timestamp/,
    ],
    [
      "impossible date",
      { time_range: { start: "2026-02-30T00:00:00Z", end: "2026-03-02T00:00:00Z" } },
      /^time_range\.start:/,
    ],
    [
      "end before start",
      { time_range: { start: "2026-11-02T00:00:00Z", end: "2026-11-01T00:00:00Z" } },
      /^time_range\.end: must be after time_range\.start/,
    ],
    [
      "empty window",
      { time_range: { start: "2026-11-02T00:00:00Z", end: "2026-11-02T00:00:00Z" } },
      /^time_range\.end: must be after/,
    ],
    ["366 days", { time_range: range(366) }, /^time_range: exceeds the maximum of 365 days$/],
    [
      "32 days of latency",
      { metrics: ["request_count", "p50_latency"], time_range: range(32) },
      /^time_range: exceeds the maximum of 31 days for p50_latency$/,
    ],
    [
      "32 days of byok_fees",
      { metrics: ["byok_fees"], time_range: range(32) },
      /maximum of 31 days for byok_fees/,
    ],
    [
      "32 days by provider",
      { dimensions: ["provider"], time_range: range(32) },
      /maximum of 31 days for provider/,
    ],
    [
      "32 days by generation",
      { dimensions: ["generation_id"], time_range: range(32) },
      /maximum of 31 days for generation_id/,
    ],
    [
      "32 days with a classifier",
      { classifier_dimensions: { classifier_id: CLF }, time_range: range(32) },
      /maximum of 31 days for classifier_dimensions/,
    ],
    [
      "32 days with classifier filters",
      {
        classifier_filters: { classifier_id: CLF, filters: [{ field: "topic", operator: "eq", value: "a" }] },
        time_range: range(32),
      },
      /maximum of 31 days for classifier_filters/,
    ],
    [
      "minute over 3 hours",
      { granularity: "minute", time_range: { start: "2026-11-18T08:59:59Z", end: "2026-11-18T12:00:00Z" } },
      /^granularity: minute requires a time_range of at most 3 hours/,
    ],
    [
      "unknown granularity",
      { granularity: "year" },
      /^granularity: must be one of minute, hour, day, week, month/,
    ],
    ["limit 0", { limit: 0 }, /^limit: must be an integer from 1 to 10000/],
    ["limit 10001", { limit: 10001 }, /^limit:/],
    [
      "group_limit 0",
      { dimensions: ["model"], group_limit: 0 },
      /^group_limit: must be an integer from 1 to 10000/,
    ],
    [
      "order by an unrequested metric",
      { order_by: { field: "total_usage", direction: "desc" } },
      /^order_by\.field: must be a requested metric, request_count/,
    ],
    [
      "order by an unrequested dimension",
      { order_by: { field: "model", direction: "asc" } },
      /^order_by\.field:/,
    ],
    [
      "order by date without granularity",
      { order_by: { field: "date", direction: "asc" } },
      /^order_by\.field: date requires a granularity/,
    ],
    [
      "three classifier names",
      { classifier_dimensions: { classifier_id: CLF, dimension_names: ["a", "b", "c"] } },
      /^classifier_dimensions\.dimension_names: at most 2 items/,
    ],
    [
      "classifier name not snake_case",
      { classifier_dimensions: { classifier_id: CLF, dimension_names: ["Topic Name"] } },
      /^classifier_dimensions\.dimension_names\[0\]: must be a snake_case name/,
    ],
    [
      "classifier name colliding with a metric",
      { classifier_dimensions: { classifier_id: CLF, dimension_names: ["request_count"] } },
      /^classifier_dimensions\.dimension_names\[0\]: "request_count" is already a column/,
    ],
    [
      "no classifier filters",
      { classifier_filters: { classifier_id: CLF, filters: [] } },
      /^classifier_filters\.filters: 1 to 10 items/,
    ],
    [
      "classifier filter with gt",
      {
        classifier_filters: { classifier_id: CLF, filters: [{ field: "topic", operator: "gt", value: "a" }] },
      },
      /^classifier_filters\.filters\[0\]\.operator: must be one of eq, neq, in, not_in/,
    ],
    [
      "classifier filter field",
      { classifier_filters: { classifier_id: CLF, filters: [{ field: "a'b", operator: "eq", value: "a" }] } },
      /^classifier_filters\.filters\[0\]\.field: must be a snake_case name/,
    ],
    [
      "different classifier ids",
      {
        classifier_dimensions: { classifier_id: CLF },
        classifier_filters: {
          classifier_id: "22222222-2222-4222-8222-222222222222",
          filters: [{ field: "topic", operator: "eq", value: "a" }],
        },
      },
      /^classifier_filters\.classifier_id: must equal classifier_dimensions\.classifier_id/,
    ],
  ];
  it.each(cases)("%s", (_name, req, message) => {
    expect(rejects(req)).toMatch(message);
  });

  it("long hostile names are cut in messages", () => {
    expect(rejects({ metrics: ["x".repeat(500)] }).length).toBeLessThan(160);
  });
});

describe("analytics plan: defaults and derived settings", () => {
  it("defaults to the last 7 days ending now, limit 1000, first metric descending", () => {
    const p = buildPlan({ metrics: ["total_usage", "request_count"] }, NOW);
    expect(p.endMs - p.startMs).toBe(7 * DAY);
    expect(p.endMs).toBe(NOW.getTime());
    expect(p.limit).toBe(1000);
    expect(p.order).toEqual([{ column: { kind: "metric", index: 0 }, direction: "desc" }]);
  });

  it("time series default order: time descending, ties by dimensions ascending", () => {
    const p = buildPlan(
      { metrics: ["request_count"], dimensions: ["model", "provider"], granularity: "day", group_limit: 2 },
      NOW,
    );
    expect(p.order.map((k) => [k.column.kind, k.direction])).toEqual([
      ["time", "desc"],
      ["dimension", "asc"],
      ["dimension", "asc"],
    ]);
    expect(p.groupLimit).toBe(2);
    expect(p.autoLimit).toBe(false);
  });

  it("time series with dimensions and no group_limit: automatic, limit raised to the maximum", () => {
    const p = buildPlan(
      { metrics: ["request_count"], dimensions: ["model"], granularity: "hour", limit: 5 },
      NOW,
    );
    expect(p.autoLimit).toBe(true);
    expect(p.limit).toBe(10_000);
    expect(p.groupLimit).toBeNull();
  });

  it("group_limit is ignored without dimensions, or when each combination is one row", () => {
    expect(
      buildPlan({ metrics: ["request_count"], granularity: "day", group_limit: 1 }, NOW).groupLimit,
    ).toBeNull();
    expect(
      buildPlan({ metrics: ["request_count"], dimensions: ["model"], group_limit: 1 }, NOW).groupLimit,
    ).toBeNull();
  });

  it("order_by request_count adds a hidden metric; date and date__<g> map to the bucket", () => {
    const p = buildPlan(
      { metrics: ["total_usage"], order_by: { field: "request_count", direction: "asc" } },
      NOW,
    );
    expect(p.metrics.map((m) => [m.def.name, m.hidden])).toEqual([
      ["total_usage", false],
      ["request_count", true],
    ]);
    for (const field of ["date", "date__week"]) {
      const q = buildPlan(
        { metrics: ["request_count"], granularity: "week", order_by: { field, direction: "asc" } },
        NOW,
      );
      expect(q.order[0]).toEqual({ column: { kind: "time" }, direction: "asc" });
    }
  });

  it("caps are inclusive: exactly 31 and 365 days, exactly 3 hours of minutes are allowed", () => {
    expect(() => buildPlan({ metrics: ["p99_latency"], time_range: range(31) }, NOW)).not.toThrow();
    expect(() => buildPlan({ metrics: ["request_count"], time_range: range(365) }, NOW)).not.toThrow();
    const threeHours = { start: "2026-11-18T09:00:00Z", end: "2026-11-18T12:00:00Z" };
    expect(() =>
      buildPlan({ metrics: ["request_count"], granularity: "minute", time_range: threeHours }, NOW),
    ).not.toThrow();
  });

  it("fractional seconds are accepted; filter workspace UUIDs are lower-cased; classifier numbers become strings", () => {
    const p = buildPlan(
      {
        metrics: ["request_count"],
        time_range: { start: "2026-11-01T00:00:00.123Z", end: "2026-11-02T00:00:00.5Z" },
        filters: [{ field: "workspace", operator: "eq", value: "AAAAAAAA-0000-4000-8000-000000000001" }],
        classifier_filters: {
          classifier_id: CLF,
          filters: [{ field: "tier", operator: "in", value: [1, "2"] }],
        },
      },
      NOW,
    );
    expect(p.startMs).toBe(Date.parse("2026-11-01T00:00:00.123Z"));
    expect(p.filters[0]!.values).toEqual(["aaaaaaaa-0000-4000-8000-000000000001"]);
    expect(p.classifierFilters!.filters[0]!.values).toEqual(["1", "2"]);
  });
});
