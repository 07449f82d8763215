import * as errors from "@openrouter/sdk/models/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { CLF, createKey } from "../http/analytics-helpers.js";
import { ingest, wireRecord } from "../http/ingest-helpers.js";

/**
 * queryAnalytics and getAnalyticsMeta of @openrouter/sdk 1.3.19 against a real listening server.
 * The SDK parses rows as `{}` (compatibility-facts §0), so row contents are read from the raw body.
 */
describe("analytics through the official SDK", () => {
  let s: ListeningApp;
  let ordinary: string;
  beforeAll(async () => {
    s = await startListening();
    ordinary = (await createKey(s, "Ordinary")).key;
    const res = await ingest(s, [
      wireRecord(s, {
        id: "s1",
        created_at: "2026-11-16T10:00:00Z",
        usage: 0.5,
        latency_ms: 100,
        user_id: "u1",
        user_name: "Una",
        user_email: "una@example.com",
      }),
      wireRecord(s, {
        id: "s2",
        created_at: "2026-11-17T10:00:00Z",
        usage: 0.25,
        latency_ms: 300,
        model: "anthropic/claude",
        classifications: [{ classifier_id: CLF, dimension_name: "topic", value: "billing" }],
      }),
    ]);
    expect(res.statusCode).toBe(200);
  });
  afterAll(() => s.close());

  it("getAnalyticsMeta parses every list", async () => {
    const meta = await s.sdk().analytics.getAnalyticsMeta();
    expect(meta.data.metrics).toHaveLength(43); // 35 of the hosted original's + 8 feedback counts
    expect(meta.data.metrics[0]).toEqual({
      name: "request_count",
      displayLabel: "Request Count",
      isRate: false,
      displayFormat: "number",
    });
    expect(meta.data.dimensions.map((d) => d.name)).toContain("context_length_bucket");
    expect(meta.data.operators).toContainEqual({ name: "not_in", valueType: "array" });
    expect(meta.data.granularities).toContainEqual({ name: "day", displayLabel: "Day" });
  });

  it("queryAnalytics: Date time ranges, camelCase options; rows read from the raw body", async () => {
    const sdk = s.sdkWithRaw();
    const res = await sdk.analytics.queryAnalytics({
      requestBody: {
        metrics: ["request_count", "total_usage", "avg_latency"],
        dimensions: ["model", "user"],
        granularity: "day",
        timeRange: { start: new Date("2026-11-16T00:00:00Z"), end: new Date("2026-11-18T00:00:00Z") },
        filters: [{ field: "model", operator: "in", value: ["openai/gpt-4o", "anthropic/claude"] }],
        orderBy: { field: "date", direction: "asc" },
        limit: 100,
        groupLimit: 10,
      },
    });
    expect(res.data.metadata).toMatchObject({ rowCount: 2, truncated: false });
    expect(typeof res.data.metadata.queryTimeMs).toBe("number");
    expect(res.data.data).toEqual([{}, {}]); // what the SDK keeps of a row
    const raw = s.lastRaw() as { data: { data: unknown[] } };
    expect(raw.data.data).toEqual([
      {
        model: "openai/gpt-4o",
        user: "Una",
        user_email: "una@example.com",
        date__day: "2026-11-16T00:00:00.000Z",
        request_count: 1,
        total_usage: 0.5,
        avg_latency: 100,
      },
      {
        model: "anthropic/claude",
        user: null,
        user_email: null,
        date__day: "2026-11-17T00:00:00.000Z",
        request_count: 1,
        total_usage: 0.25,
        avg_latency: 300,
      },
    ]);
  });

  it("queryAnalytics: classifier dimensions and filters, key hash filter, warnings and cachedAt", async () => {
    const sdk = s.sdkWithRaw();
    const body = {
      metrics: ["request_count"],
      timeRange: { start: new Date("2026-11-16T00:00:00Z"), end: new Date("2026-11-18T00:00:00Z") },
      filters: [{ field: "api_key_id", operator: "in", value: [hashKey(s.key), "f".repeat(64)] }],
      classifierDimensions: { classifierId: CLF, dimensionNames: ["topic"] },
      classifierFilters: {
        classifierId: CLF,
        filters: [{ field: "topic", operator: "eq", value: "billing" }],
      },
    };
    const first = await sdk.analytics.queryAnalytics({ requestBody: body });
    expect(first.data.warnings).toHaveLength(1);
    expect((s.lastRaw() as { data: { data: unknown[] } }).data.data).toEqual([
      { topic: "billing", request_count: 1 },
    ]);
    const again = await sdk.analytics.queryAnalytics({ requestBody: body });
    expect(typeof again.data.cachedAt).toBe("number");
  });

  it("errors map to the SDK's typed classes: 400, 401, 403", async () => {
    const bad = s
      .sdk()
      .analytics.queryAnalytics({ requestBody: { metrics: ["request_count"], dimensions: ["a", "b", "c"] } });
    await expect(bad).rejects.toBeInstanceOf(errors.BadRequestResponseError);
    await expect(bad).rejects.toMatchObject({ message: "dimensions: at most 2 items" });
    await expect(
      s.sdk().analytics.queryAnalytics({ requestBody: { metrics: ["nope"] } }),
    ).rejects.toBeInstanceOf(errors.BadRequestResponseError);
    await expect(s.sdk(`sk-gh-v1-${"0".repeat(64)}`).analytics.getAnalyticsMeta()).rejects.toBeInstanceOf(
      errors.UnauthorizedResponseError,
    );
    const forbidden = s
      .sdk(ordinary)
      .analytics.queryAnalytics({ requestBody: { metrics: ["request_count"] } });
    await expect(forbidden).rejects.toBeInstanceOf(errors.ForbiddenResponseError);
    await expect(s.sdk(ordinary).analytics.getAnalyticsMeta()).rejects.toBeInstanceOf(
      errors.ForbiddenResponseError,
    );
  });
});

describe("analytics 408 through the official SDK", () => {
  let s: ListeningApp;
  let inner: ActivityStore;
  beforeAll(async () => {
    inner = await openDuckDbActivityStore({ path: ":memory:" });
    const slow: ActivityStore = {
      ...inner,
      dialect: inner.dialect,
      query: (_q, opts) =>
        inner.query(
          { sql: "SELECT count(*) AS n FROM range(100000000000) t(x) WHERE hash(x) = 0", params: {} },
          opts,
        ),
    };
    s = await startListening({
      activity: slow,
      config: { analytics: { queryTimeoutMs: 300, cacheTtlMs: 0 } },
    });
  });
  afterAll(async () => {
    await s.close();
    await inner.close();
  });

  it("a timed-out query is RequestTimeoutResponseError with the documented message", async () => {
    const call = s.sdk().analytics.queryAnalytics({ requestBody: { metrics: ["request_count"] } });
    await expect(call).rejects.toBeInstanceOf(errors.RequestTimeoutResponseError);
    await expect(
      s.sdk().analytics.queryAnalytics({ requestBody: { metrics: ["request_count"] } }),
    ).rejects.toMatchObject({
      message: "Operation timed out. Please try again later.",
    });
  });
});
