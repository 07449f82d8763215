import {
  GetAnalyticsMetaResponse$inboundSchema,
  QueryAnalyticsResponse$inboundSchema,
} from "@openrouter/sdk/models/operations";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { CLF, createKey, query } from "./analytics-helpers.js";
import { ingest, wireRecord } from "./ingest-helpers.js";

/** POST /analytics/query and GET /analytics/meta through inject: statuses, shapes, validation. */
describe("analytics over HTTP", () => {
  let t: TestApp;
  let ordinary: string;
  beforeAll(async () => {
    t = await makeTestApp();
    ordinary = (await createKey(t, "Ordinary")).key;
    const res = await ingest(t, [
      wireRecord(t, {
        id: "a1",
        created_at: "2026-11-16T10:00:00Z",
        usage: 0.1,
        byok_usage_inference: 0.02,
        latency_ms: 100,
      }),
      wireRecord(t, {
        id: "a2",
        created_at: "2026-11-16T11:00:00Z",
        usage: 0.2,
        latency_ms: 300,
        model: "anthropic/claude",
      }),
      wireRecord(t, { id: "a3", created_at: "2026-11-17T09:30:00Z", usage: 0.3, latency_ms: 200 }),
    ]);
    expect(res.statusCode).toBe(200);
  });
  afterAll(() => t.close());

  describe("authentication", () => {
    it("401 without a key, 403 for an ordinary key, on both operations", async () => {
      for (const [method, url] of [
        ["POST", "/api/v1/analytics/query"],
        ["GET", "/api/v1/analytics/meta"],
      ] as const) {
        const payload = method === "POST" ? { metrics: ["request_count"] } : undefined;
        const none = await t.call({ method, url, payload, auth: null });
        expect(none.statusCode).toBe(401);
        expect(none.json().error.code).toBe(401);
        const bad = await t.call({ method, url, payload, auth: "sk-gh-v1-" + "0".repeat(64) });
        expect(bad.statusCode).toBe(401);
        const forbidden = await t.call({ method, url, payload, auth: ordinary });
        expect(forbidden.statusCode).toBe(403);
        expect(forbidden.json()).toEqual({
          error: { code: 403, message: "Only management keys can perform this operation", metadata: null },
        });
      }
    });
  });

  describe("GET /analytics/meta", () => {
    it("lists metrics, dimensions, operators and granularities in the SDK's shape", async () => {
      const res = await t.call({ method: "GET", url: "/api/v1/analytics/meta" });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(() => GetAnalyticsMetaResponse$inboundSchema.parse(body)).not.toThrow();
      expect(body.data.metrics).toHaveLength(43); // 35 of the hosted original's + 8 feedback counts
      expect(body.data.metrics[0]).toEqual({
        name: "request_count",
        display_label: "Request Count",
        is_rate: false,
        display_format: "number",
      });
      expect(body.data.dimensions).toHaveLength(14);
      expect(body.data.operators).toHaveLength(8);
      expect(body.data.granularities.map((g: { name: string }) => g.name)).toEqual([
        "minute",
        "hour",
        "day",
        "week",
        "month",
      ]);
    });
  });

  describe("200 shapes", () => {
    const range = { start: "2026-11-16T00:00:00Z", end: "2026-11-18T00:00:00Z" };

    it("totals: one row of JSON numbers (money in USD, counts as numbers), metadata", async () => {
      const res = await query(t, {
        metrics: [
          "request_count",
          "total_usage",
          "credits_usage",
          "byok_usage",
          "avg_latency",
          "p50_latency",
          "tokens_total",
        ],
        time_range: range,
      });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(() => QueryAnalyticsResponse$inboundSchema.parse(body)).not.toThrow();
      expect(body.data.data).toEqual([
        {
          request_count: 3,
          total_usage: 0.62,
          credits_usage: 0.6,
          byok_usage: 0.02,
          avg_latency: 200,
          p50_latency: 200,
          tokens_total: 3600,
        },
      ]);
      expect(body.data.metadata.row_count).toBe(1);
      expect(body.data.metadata.truncated).toBe(false);
      expect(typeof body.data.metadata.query_time_ms).toBe("number");
      expect(body.data).not.toHaveProperty("cachedAt");
      expect(body.data).not.toHaveProperty("warnings");
    });

    it("no activity: sums and counts 0, averages, percentiles and rates null", async () => {
      const res = await query(t, {
        metrics: ["request_count", "total_usage", "avg_latency", "p99_latency", "cache_hit_rate"],
        time_range: { start: "2020-01-01T00:00:00Z", end: "2020-01-02T00:00:00Z" },
      });
      expect(res.json().data.data).toEqual([
        { request_count: 0, total_usage: 0, avg_latency: null, p99_latency: null, cache_hit_rate: null },
      ]);
    });

    it("time series: date__<granularity> ISO buckets, newest first by default", async () => {
      const res = await query(t, { metrics: ["request_count"], granularity: "day", time_range: range });
      expect(res.json().data.data).toEqual([
        { date__day: "2026-11-17T00:00:00.000Z", request_count: 1 },
        { date__day: "2026-11-16T00:00:00.000Z", request_count: 2 },
      ]);
      const week = await query(t, { metrics: ["request_count"], granularity: "week", time_range: range });
      expect(week.json().data.data).toEqual([{ date__week: "2026-11-16T00:00:00.000Z", request_count: 3 }]);
    });

    it("default time_range is the last 7 days ending now (injected clock)", async () => {
      t.clock.set("2026-11-23T09:30:00.000Z"); // the window starts 2026-11-16T09:30: a1 (10:00) is in, nothing before
      const res = await query(t, { metrics: ["request_count"], dimensions: ["model"] });
      t.clock.set("2026-11-18T12:00:00.000Z");
      expect(res.json().data.data).toEqual([
        { model: "openai/gpt-4o", request_count: 2 },
        { model: "anthropic/claude", request_count: 1 },
      ]);
    });

    it("order_by: request_count even when not requested, a dimension, date; ties by dimension ascending", async () => {
      const byCount = await query(t, {
        metrics: ["total_usage"],
        dimensions: ["model"],
        order_by: { field: "request_count", direction: "asc" },
        time_range: range,
      });
      expect(byCount.json().data.data).toEqual([
        { model: "anthropic/claude", total_usage: 0.2 },
        { model: "openai/gpt-4o", total_usage: 0.42 },
      ]);
      const byModel = await query(t, {
        metrics: ["request_count"],
        dimensions: ["model"],
        order_by: { field: "model", direction: "desc" },
        time_range: range,
      });
      expect(byModel.json().data.data.map((r: { model: string }) => r.model)).toEqual([
        "openai/gpt-4o",
        "anthropic/claude",
      ]);
      const byDate = await query(t, {
        metrics: ["request_count"],
        granularity: "day",
        order_by: { field: "date", direction: "asc" },
        time_range: range,
      });
      expect(byDate.json().data.data[0].date__day).toBe("2026-11-16T00:00:00.000Z");
    });

    it("limit cuts and reports truncated; group_limit keeps the first n per combination", async () => {
      const cut = await query(t, {
        metrics: ["request_count"],
        dimensions: ["model"],
        limit: 1,
        time_range: range,
      });
      expect(cut.json().data.data).toEqual([{ model: "openai/gpt-4o", request_count: 2 }]);
      expect(cut.json().data.metadata).toMatchObject({ row_count: 1, truncated: true });
      const perGroup = await query(t, {
        metrics: ["request_count"],
        dimensions: ["model"],
        granularity: "hour",
        group_limit: 1,
        time_range: range,
      });
      expect(perGroup.json().data.data).toEqual([
        { model: "openai/gpt-4o", date__hour: "2026-11-17T09:00:00.000Z", request_count: 1 },
        { model: "anthropic/claude", date__hour: "2026-11-16T11:00:00.000Z", request_count: 1 },
      ]);
      expect(perGroup.json().data.metadata.truncated).toBe(true);
    });

    it("time series with dimensions and no group_limit raise the limit so no bucket is cut", async () => {
      const res = await query(t, {
        metrics: ["request_count"],
        dimensions: ["model"],
        granularity: "hour",
        limit: 1,
        time_range: range,
      });
      expect(res.json().data.data).toHaveLength(3);
      expect(res.json().data.metadata.truncated).toBe(false);
    });

    it("group_limit without dimensions is ignored", async () => {
      const res = await query(t, {
        metrics: ["request_count"],
        granularity: "hour",
        group_limit: 1,
        time_range: range,
      });
      expect(res.json().data.data).toHaveLength(3);
    });
  });

  describe("validation: 400 naming the field, nothing runs", () => {
    const cases: [string, unknown, RegExp][] = [
      ["no body fields", {}, /^metrics: is required$/],
      ["metrics not an array", { metrics: "request_count" }, /^metrics: must be array/],
      ["empty metrics", { metrics: [] }, /^metrics: at least 1 item$/],
      ["unknown metric", { metrics: ["request_count", "costs"] }, /^metrics\[1\]: unknown metric "costs"/],
      [
        "three dimensions",
        { metrics: ["request_count"], dimensions: ["model", "app", "user"] },
        /^dimensions: at most 2 items$/,
      ],
      [
        "unknown dimension",
        { metrics: ["request_count"], dimensions: ["region"] },
        /^dimensions\[0\]: unknown dimension "region"/,
      ],
      [
        "21 filters",
        {
          metrics: ["request_count"],
          filters: Array.from({ length: 21 }, () => ({ field: "model", operator: "eq", value: "a" })),
        },
        /^filters: at most 20 items$/,
      ],
      [
        "filter without value",
        { metrics: ["request_count"], filters: [{ field: "model", operator: "eq" }] },
        /^filters\[0\]\.value: is required$/,
      ],
      [
        "unknown operator",
        { metrics: ["request_count"], filters: [{ field: "model", operator: "contains", value: "a" }] },
        /^filters\[0\]\.operator: must be one of eq, neq, gt, gte, lt, lte, in, not_in$/,
      ],
      [
        "boolean value",
        { metrics: ["request_count"], filters: [{ field: "model", operator: "eq", value: true }] },
        /^filters\[0\]\.value: must be/,
      ],
      [
        "scalar for in",
        { metrics: ["request_count"], filters: [{ field: "model", operator: "in", value: "a" }] },
        /^filters\[0\]\.value: must be an array for operator in$/,
      ],
      [
        "include_unset on a dimension without unset bucket",
        {
          metrics: ["request_count"],
          filters: [{ field: "model", operator: "in", value: ["a"], include_unset: true }],
        },
        /^filters\[0\]\.include_unset: dimension model has no unset bucket$/,
      ],
      [
        "include_unset as a string",
        {
          metrics: ["request_count"],
          filters: [{ field: "variant", operator: "in", value: ["a"], include_unset: "true" }],
        },
        /^filters\[0\]\.include_unset: must be boolean$/,
      ],
      ["limit as a string", { metrics: ["request_count"], limit: "10" }, /^limit: must be integer$/],
      ["limit 0", { metrics: ["request_count"], limit: 0 }, /^limit: must be >= 1$/],
      ["limit 10001", { metrics: ["request_count"], limit: 10001 }, /^limit: must be <= 10000$/],
      [
        "group_limit 10001",
        { metrics: ["request_count"], group_limit: 10001 },
        /^group_limit: must be <= 10000$/,
      ],
      ["fractional limit", { metrics: ["request_count"], limit: 1.5 }, /^limit: must be integer$/],
      [
        "granularity year",
        { metrics: ["request_count"], granularity: "year" },
        /^granularity: must be one of minute, hour, day, week, month$/,
      ],
      [
        "time_range without end",
        { metrics: ["request_count"], time_range: { start: "2026-11-01T00:00:00Z" } },
        /^time_range\.end: is required$/,
      ],
      [
        "minute precision",
        {
          metrics: ["request_count"],
          time_range: { start: "2026-11-01T00:00Z", end: "2026-11-02T00:00:00Z" },
        },
        /^time_range\.start: must be a UTC timestamp with seconds/,
      ],
      [
        "more than 365 days",
        {
          metrics: ["request_count"],
          time_range: { start: "2025-11-01T00:00:00Z", end: "2026-11-02T00:00:00Z" },
        },
        /^time_range: exceeds the maximum of 365 days$/,
      ],
      [
        "more than 31 days of latency",
        {
          metrics: ["p90_latency"],
          time_range: { start: "2026-10-01T00:00:00Z", end: "2026-11-02T00:00:00Z" },
        },
        /^time_range: exceeds the maximum of 31 days for p90_latency$/,
      ],
      [
        "minute over more than 3 hours",
        {
          metrics: ["request_count"],
          granularity: "minute",
          time_range: { start: "2026-11-01T00:00:00Z", end: "2026-11-01T03:00:01Z" },
        },
        /^granularity: minute requires a time_range of at most 3 hours$/,
      ],
      [
        "order_by without direction",
        { metrics: ["request_count"], order_by: { field: "request_count" } },
        /^order_by\.direction: is required$/,
      ],
      [
        "order_by direction up",
        { metrics: ["request_count"], order_by: { field: "request_count", direction: "up" } },
        /^order_by\.direction: must be one of asc, desc$/,
      ],
      [
        "order_by an unrequested metric",
        { metrics: ["request_count"], order_by: { field: "total_usage", direction: "asc" } },
        /^order_by\.field: must be a requested metric, request_count/,
      ],
      [
        "order_by date without granularity",
        { metrics: ["request_count"], order_by: { field: "date", direction: "asc" } },
        /^order_by\.field: date requires a granularity$/,
      ],
      [
        "classifier id not a UUID",
        { metrics: ["request_count"], classifier_dimensions: { classifier_id: "clf" } },
        /^classifier_dimensions\.classifier_id: must be a valid uuid$/,
      ],
      [
        "three classifier names",
        {
          metrics: ["request_count"],
          classifier_dimensions: { classifier_id: CLF, dimension_names: ["a", "b", "c"] },
        },
        /^classifier_dimensions\.dimension_names: at most 2 items$/,
      ],
      [
        "11 classifier filters",
        {
          metrics: ["request_count"],
          classifier_filters: {
            classifier_id: CLF,
            filters: Array.from({ length: 11 }, () => ({ field: "t", operator: "eq", value: "a" })),
          },
        },
        /^classifier_filters\.filters: at most 10 items$/,
      ],
      [
        "classifier filter with lt",
        {
          metrics: ["request_count"],
          classifier_filters: { classifier_id: CLF, filters: [{ field: "t", operator: "lt", value: "a" }] },
        },
        /^classifier_filters\.filters\[0\]\.operator: must be one of eq, neq, in, not_in$/,
      ],
      [
        "classifier ids differ",
        {
          metrics: ["request_count"],
          classifier_dimensions: { classifier_id: CLF },
          classifier_filters: {
            classifier_id: "22222222-2222-4222-8222-222222222222",
            filters: [{ field: "t", operator: "eq", value: "a" }],
          },
        },
        /^classifier_filters\.classifier_id: must equal classifier_dimensions\.classifier_id$/,
      ],
    ];
    it.each(cases)("%s", async (_name, payload, message) => {
      const res = await query(t, payload);
      expect(res.statusCode).toBe(400);
      const body = res.json();
      expect(body.error.code).toBe(400);
      expect(body.error.message).toMatch(message);
    });

    it("a body that is not JSON is 400; another media type is 415", async () => {
      const notJson = await t.call({
        method: "POST",
        url: "/api/v1/analytics/query",
        payload: "{metrics:",
        headers: { "content-type": "application/json" },
      });
      expect(notJson.statusCode).toBe(400);
      const text = await t.call({
        method: "POST",
        url: "/api/v1/analytics/query",
        payload: "metrics=request_count",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      expect(text.statusCode).toBe(415);
    });
  });

  it("the OpenAPI document lists both operations with their schemas", async () => {
    const doc = (await t.call({ method: "GET", url: "/api/v1/openapi.json" })).json();
    expect(doc.paths["/analytics/query"].post.operationId).toBe("queryAnalytics");
    expect(doc.paths["/analytics/meta"].get.operationId).toBe("getAnalyticsMeta");
    expect(
      doc.paths["/analytics/query"].post.requestBody.content["application/json"].schema.required,
    ).toEqual(["metrics"]);
  });
});
