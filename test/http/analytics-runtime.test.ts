import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { hashKey } from "../../src/lib/ids.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { loadConfig } from "../../src/config/config.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { createKey, query } from "./analytics-helpers.js";
import { ingest, wireRecord } from "./ingest-helpers.js";

const range = { start: "2026-11-10T00:00:00Z", end: "2026-11-18T12:00:00Z" };
const DUCK_SLOW = "SELECT count(*) AS n FROM range(100000000000) t(x) WHERE hash(x) = 0";
const base = loadConfig({ GATEHOUSE_DATA_DIR: "/tmp/gatehouse-test" });

/** A real DuckDB store whose analytics queries are replaced by a scan that never ends in time. */
function slowStore(inner: ActivityStore): ActivityStore {
  return {
    ...inner,
    dialect: inner.dialect,
    query: (_q, opts) => inner.query({ sql: DUCK_SLOW, params: {} }, opts),
  };
}

describe("analytics: time limit, cache, rate limit", () => {
  it("a query past its time limit is cancelled and answered 408", async () => {
    const inner = await openDuckDbActivityStore({ path: ":memory:" });
    const t = await makeTestApp({
      activity: slowStore(inner),
      config: { analytics: { queryTimeoutMs: 300, cacheTtlMs: 30_000 } },
    });
    try {
      const started = Date.now();
      const res = await query(t, { metrics: ["request_count"] });
      expect(res.statusCode).toBe(408);
      expect(res.json()).toEqual({
        error: { code: 408, message: "Operation timed out. Please try again later.", metadata: null },
      });
      expect(Date.now() - started).toBeLessThan(5_000);
      // The engine query was cancelled: the same engine answers at once.
      const quick = await inner.query({ sql: "SELECT 1 AS one", params: {} }, { timeoutMs: 2_000 });
      expect(quick).toEqual([{ one: 1 }]);
    } finally {
      await t.close();
      await inner.close();
    }
  });

  describe("cache", () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await makeTestApp({ config: { analytics: { queryTimeoutMs: 10_000, cacheTtlMs: 30_000 } } });
      await ingest(t, [wireRecord(t, { id: "c1", created_at: "2026-11-17T10:00:00Z" })]);
    });
    afterAll(() => t.close());

    it("an identical query within the TTL is served from cache with cachedAt; new activity invalidates it", async () => {
      const body = { metrics: ["request_count"], time_range: range };
      const first = (await query(t, body)).json().data;
      expect(first).not.toHaveProperty("cachedAt");
      t.clock.advance(5_000);
      const second = (await query(t, body)).json().data;
      expect(second.cachedAt).toBe(Date.parse("2026-11-18T12:00:00.000Z"));
      expect(second.data).toEqual(first.data);
      // Key order does not make a different query.
      const reordered = (await query(t, { time_range: range, metrics: ["request_count"] })).json().data;
      expect(reordered.cachedAt).toBeDefined();

      await ingest(t, [wireRecord(t, { id: "c2", created_at: "2026-11-17T11:00:00Z" })]);
      const fresh = (await query(t, body)).json().data;
      expect(fresh).not.toHaveProperty("cachedAt");
      expect(fresh.data).toEqual([{ request_count: 2 }]);

      t.clock.advance(30_000);
      const expired = (await query(t, body)).json().data;
      expect(expired).not.toHaveProperty("cachedAt");
      t.clock.set("2026-11-18T12:00:00.000Z");
    });

    it("the cache is per organization", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const body = { metrics: ["request_count"], time_range: range, limit: 3 };
      await query(t, body);
      const theirs = (await query(t, body, other.managementKey)).json().data;
      expect(theirs).not.toHaveProperty("cachedAt");
      expect(theirs.data).toEqual([{ request_count: 0 }]);
    });
  });

  it("the analytics rate limit answers 429 with Retry-After", async () => {
    const t = await makeTestApp({
      config: { rateLimit: { ...base.rateLimit, analytics: { max: 2, windowMs: 60_000 } } },
    });
    try {
      // Each operation has its own budget of the configured size.
      expect((await t.call({ method: "GET", url: "/api/v1/analytics/meta" })).statusCode).toBe(200);
      expect((await query(t, { metrics: ["request_count"] })).statusCode).toBe(200);
      expect((await query(t, { metrics: ["request_count"] })).statusCode).toBe(200);
      const limited = await query(t, { metrics: ["request_count"] });
      expect(limited.statusCode).toBe(429);
      expect(limited.headers["retry-after"]).toBeDefined();
      expect(limited.json().error.code).toBe(429);
    } finally {
      await t.close();
    }
  });
});

describe("ledger and analytics agree", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  const NOW = Date.parse("2026-11-18T12:00:00.000Z");
  const DAY = 86_400_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  // Windows (docs/api-notes.md "Analytics"): UTC day, ISO week from Monday, calendar month, all time (data is < 365 days old).
  const WINDOWS = {
    daily: Date.parse("2026-11-18T00:00:00Z"),
    weekly: Date.parse("2026-11-16T00:00:00Z"),
    monthly: Date.parse("2026-11-01T00:00:00Z"),
    all: NOW - 365 * DAY,
  };

  const record = fc.record({
    ageMs: fc.oneof(fc.integer({ min: 1, max: 3 * DAY }), fc.integer({ min: 1, max: 360 * DAY })),
    usage: fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 1e9 + Math.floor(n / 1000) / 100),
    byok: fc.integer({ min: 0, max: 5_000_000 }).map((n) => n / 1e9),
    is_byok: fc.boolean(),
    workspace_null: fc.boolean(),
  });

  it("after random ingests (with retried batches) key usage fields equal analytics sums for the same windows", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { minLength: 1, maxLength: 25 }),
        fc.boolean(),
        async (recs, retry) => {
          run += 1;
          const k = await createKey(t, `ledger-${run}`);
          const hash = hashKey(k.key);
          const batch = recs.map((r, i) =>
            wireRecord(t, {
              id: `ledger-${run}-${i}`,
              api_key_hash: hash,
              created_at: iso(NOW - r.ageMs).replace(/\.\d{3}Z$/, "Z"),
              usage: r.usage,
              byok_usage_inference: r.byok,
              is_byok: r.is_byok,
              ...(r.workspace_null ? { workspace_id: null } : {}),
            }),
          );
          const accepted = await ingest(t, batch);
          expect(accepted.statusCode, accepted.body).toBe(200);
          if (retry) expect((await ingest(t, batch)).json().data.duplicates).toBe(batch.length);

          const key = (await t.call({ method: "GET", url: `/api/v1/keys/${hash}` })).json().data;
          for (const [window, start] of Object.entries(WINDOWS)) {
            const res = await query(t, {
              metrics: ["credits_usage", "byok_usage"],
              filters: [{ field: "api_key_id", operator: "eq", value: hash }],
              time_range: { start: iso(start), end: iso(window === "all" ? NOW : NOW + 1000) },
            });
            expect(res.statusCode, res.body).toBe(200);
            const [row] = res.json().data.data;
            const suffix = window === "all" ? "" : `_${window}`;
            expect(row.credits_usage, `usage${suffix}`).toBe(key[`usage${suffix}`]);
            expect(row.byok_usage, `byok_usage${suffix}`).toBe(key[`byok_usage${suffix}`]);
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 60_000);
});
