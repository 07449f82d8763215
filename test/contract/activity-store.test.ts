import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIVITY_COLUMNS } from "../../src/activity/activity-row.js";
import type { FeedbackRow } from "../../src/activity/feedback-row.js";
import { ActivityTimeoutError, type ActivityStore } from "../../src/stores/activity-store.js";
import { ACTIVITY_STORE_FACTORIES, activityRow, tagOf } from "../helpers/activity-stores.js";

const ORG_A = "00000000-0000-4000-8000-00000000000a";
const ORG_B = "00000000-0000-4000-8000-00000000000b";

for (const f of ACTIVITY_STORE_FACTORIES) {
  describe.skipIf(f.skip)(`activity store on ${f.name}`, () => {
    let store: ActivityStore;
    beforeAll(async () => {
      store = await f.open();
    });
    afterAll(() => store?.close());

    /** $name on DuckDB, {name:Type} on ClickHouse. */
    const p = (name: string, chType: string) => (f.dialect === "duckdb" ? `$${name}` : `{${name}:${chType}}`);
    const q = (sql: string, params: Record<string, never> | Record<string, unknown> = {}) =>
      store.query({ sql, params: params as never }, { timeoutMs: 10_000 });
    const count = async (org: string) => {
      const [r] = await q(
        `SELECT count(*) AS n FROM generations WHERE organization_id = ${p("org", "String")}`,
        {
          org,
        },
      );
      return r!.n;
    };

    it("answers ping and reports its dialect", async () => {
      await expect(store.ping()).resolves.toBeUndefined();
      expect(store.dialect).toBe(f.dialect);
    });

    it("round-trips every column of a generation in the agreed representation", async () => {
      const row = activityRow({
        organization_id: ORG_A,
        id: "round-trip",
        created_at_ms: Date.parse("2026-11-18T12:34:56.789Z"),
        api_key_id: 42,
        workspace_id: null,
        variant: "free",
        app_id: 7,
        user_id: "user_1",
        external_user: "ext 'quoted' \"x\"",
        origin: "https://example.com",
        country: "DE",
        is_byok: true,
        streamed: true,
        usage_nano: 9_007_199_254_740_993n, // 2^53 + 1: not representable as a double
        usage_data_nano: -5n,
        latency_ms: 12.5,
        generation_time_ms: null,
        throughput: null,
      });
      await store.insert([row], []);
      const [got] = await q(
        `SELECT ${ACTIVITY_COLUMNS.map((c) => (c === "created_at_ms" ? "created_at" : c)).join(", ")}
         FROM generations WHERE organization_id = ${p("org", "String")} AND id = ${p("id", "String")}`,
        { org: ORG_A, id: "round-trip" },
      );
      expect(got).toEqual({
        ...Object.fromEntries(Object.entries(row).filter(([k]) => k !== "created_at_ms")),
        created_at: "2026-11-18T12:34:56.789Z",
        api_key_id: 42n,
        app_id: 7n,
        tokens_prompt: 1200n,
        tokens_completion: 300n,
        tokens_reasoning: 0n,
        tokens_cached: 0n,
      });
    });

    it("keeps money exact to the nano-dollar in sums beyond 2^53 (bigint, never a float)", async () => {
      const org = "00000000-0000-4000-8000-0000000000c1";
      const rows = [3_000_000_000_000_000_001n, 3_000_000_000_000_000_003n, 5n].map((usage_nano) =>
        activityRow({ organization_id: org, usage_nano }),
      );
      await store.insert(rows, []);
      const [r] = await q(
        `SELECT sum(usage_nano) AS s, count(*) AS n, avg(latency_ms) AS a, min(created_at) AS t
         FROM generations WHERE organization_id = ${p("org", "String")}`,
        { org },
      );
      expect(r).toEqual({ s: 6_000_000_000_000_000_009n, n: 3n, a: 250, t: "2026-11-18T12:00:00.000Z" });
    });

    it("skips ids already present (first write wins), per organization, also inside one batch", async () => {
      const first = activityRow({ organization_id: ORG_B, id: "dup-1", usage_nano: 1n });
      const again = { ...first, usage_nano: 999n };
      const twin = activityRow({ organization_id: ORG_B, id: "dup-2", usage_nano: 2n });
      const twinLater = { ...twin, usage_nano: 888n };
      await store.insert([first, twin, twinLater], []);
      await store.insert([again, twin], []);
      const sameIdOtherOrg = { ...first, organization_id: "00000000-0000-4000-8000-0000000000c2" };
      await store.insert([sameIdOtherOrg], []);
      expect(await count(ORG_B)).toBe(2n);
      expect(await count(sameIdOtherOrg.organization_id)).toBe(1n);
      const rows = await q(
        `SELECT id, usage_nano FROM generations WHERE organization_id = ${p("org", "String")} ORDER BY id`,
        { org: ORG_B },
      );
      expect(rows).toEqual([
        { id: "dup-1", usage_nano: 1n },
        { id: "dup-2", usage_nano: 2n },
      ]);
    });

    it("writes tags once, and still writes them when only the generation made it before a crash", async () => {
      const org = "00000000-0000-4000-8000-0000000000c3";
      const a = activityRow({ organization_id: org, id: "tagged-a" });
      const b = activityRow({ organization_id: org, id: "tagged-b" });
      const tagsA = [tagOf(a), tagOf(a, { dimension_name: "intent", value: "refund" })];
      await store.insert([a], tagsA);
      await store.insert([a], tagsA); // retry: nothing doubled
      await store.insert([b], []); // "crash" after the generation, before its tags
      await store.insert([b], [tagOf(b, { value: "sales" })]); // retry writes the tags
      const rows = await q(
        `SELECT generation_id, dimension_name, value, created_at FROM generation_tags
         WHERE organization_id = ${p("org", "String")} ORDER BY generation_id, dimension_name`,
        { org },
      );
      expect(rows).toEqual([
        {
          generation_id: "tagged-a",
          dimension_name: "intent",
          value: "refund",
          created_at: "2026-11-18T12:00:00.000Z",
        },
        {
          generation_id: "tagged-a",
          dimension_name: "topic",
          value: "billing",
          created_at: "2026-11-18T12:00:00.000Z",
        },
        {
          generation_id: "tagged-b",
          dimension_name: "topic",
          value: "sales",
          created_at: "2026-11-18T12:00:00.000Z",
        },
      ]);
    });

    it("writes feedback once per (organization, feedback id), at its generation's time, also across retries", async () => {
      const org = "00000000-0000-4000-8000-0000000000c7";
      const at = Date.parse("2026-11-17T09:30:00.123Z");
      const fb = (feedback_id: string, over: Partial<FeedbackRow> = {}): FeedbackRow => ({
        organization_id: org,
        feedback_id,
        generation_id: "gen-with-feedback",
        created_at_ms: at,
        category: "latency",
        submitted_at_ms: at + 86_400_000,
        ...over,
      });
      await store.insertFeedback([fb("fb-1"), fb("fb-2", { category: "api_error" }), fb("fb-1")]);
      // A pass that died after its write is retried: nothing doubles; a new id is still written.
      await store.insertFeedback([fb("fb-2", { category: "other" }), fb("fb-3", { category: "other" })]);
      // The same feedback id in another organization is another submission.
      await store.insertFeedback([fb("fb-1", { organization_id: "00000000-0000-4000-8000-0000000000c8" })]);
      await store.insertFeedback([]);
      const rows = await q(
        `SELECT feedback_id, generation_id, category, created_at, submitted_at FROM generation_feedback
         WHERE organization_id = ${p("org", "String")} ORDER BY feedback_id`,
        { org },
      );
      const row = (feedback_id: string, category: string) => ({
        feedback_id,
        generation_id: "gen-with-feedback",
        category,
        created_at: "2026-11-17T09:30:00.123Z",
        submitted_at: "2026-11-18T09:30:00.123Z",
      });
      expect(rows).toEqual([row("fb-1", "latency"), row("fb-2", "api_error"), row("fb-3", "other")]);
    });

    it("binds hostile strings, lists and bigints as values", async () => {
      const org = "00000000-0000-4000-8000-0000000000c4";
      const evil = "x'); DROP TABLE generations; --";
      await store.insert([activityRow({ organization_id: org, id: evil, model: "a/b" })], []);
      const list = f.dialect === "duckdb" ? "$ids" : "{ids:Array(String)}";
      const rows = await q(
        `SELECT id, ${p("big", "Int64")} AS big FROM generations
         WHERE organization_id = ${p("org", "String")} AND id IN ${f.dialect === "duckdb" ? `(SELECT unnest(${list}))` : list}`,
        { org, ids: [evil, "other"], big: 9_223_372_036_854_775_807n },
      );
      expect(rows).toEqual([{ id: evil, big: 9_223_372_036_854_775_807n }]);
      expect(await count(org)).toBe(1n);
    });

    it("inserts a large batch exactly once", async () => {
      const org = "00000000-0000-4000-8000-0000000000c5";
      const base = Date.parse("2026-10-01T00:00:00Z");
      const rows = Array.from({ length: 5000 }, (_, i) =>
        activityRow({
          organization_id: org,
          id: `bulk-${i}`,
          created_at_ms: base + i * 60_000,
          usage_nano: BigInt(i),
        }),
      );
      await store.insert(rows, []);
      await store.insert(rows.slice(1000, 3000), []);
      const [r] = await q(
        `SELECT count(*) AS n, sum(usage_nano) AS s FROM generations WHERE organization_id = ${p("org", "String")}`,
        { org },
      );
      expect(r).toEqual({ n: 5000n, s: BigInt((4999 * 5000) / 2) });
    });

    it("cancels a query past its time limit with ActivityTimeoutError and stays usable", async () => {
      const started = Date.now();
      await expect(store.query({ sql: f.slowSql, params: {} }, { timeoutMs: 300 })).rejects.toBeInstanceOf(
        ActivityTimeoutError,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await count(ORG_B)).toBe(2n);
    });

    it("ingest is not blocked by a running analytics query (chDB: waits, then proceeds)", async () => {
      const slow = store.query({ sql: f.slowSql, params: {} }, { timeoutMs: 2_000 }).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      const org = "00000000-0000-4000-8000-0000000000c6";
      await store.insert([activityRow({ organization_id: org })], []);
      expect(await count(org)).toBe(1n);
      const ms = Date.now() - started;
      expect(await slow).toBeInstanceOf(ActivityTimeoutError);
      if (f.concurrent) expect(ms).toBeLessThan(1_500);
      else expect(ms).toBeLessThan(5_000); // chDB: one statement at a time, the insert ran after the cancel
    });
  });
}
