import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openChdbActivityStore } from "../../src/stores/clickhouse/chdb-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { chat, HI } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { STORE_FACTORIES } from "../helpers/stores.js";
import { createKey, createWorkspace } from "./analytics-helpers.js";

const ENGINES: { name: string; open: () => Promise<ActivityStore> }[] = [
  { name: "duckdb", open: () => openDuckDbActivityStore({ path: ":memory:" }) },
  { name: "clickhouse (chdb)", open: () => openChdbActivityStore() },
];

const DAY1 = "2026-11-16T09:00:00.000Z";
const DAY2 = "2026-11-17T15:00:00.000Z";
const LATER = "2026-11-18T12:00:00.000Z";
const range = { start: "2026-11-15T00:00:00Z", end: "2026-11-19T00:00:00Z" };

/**
 * Feedback in analytics end to end, over a real socket on every record store and activity engine:
 * generations served by the built-in mock through each API surface, feedback submitted through
 * POST /generation/feedback, then counted by POST /analytics/query per model, key, surface and
 * day (at the generations' days, whenever it was submitted), per category, ordered by it, in
 * cache-invalidating fashion, and never across organizations.
 */
for (const f of STORE_FACTORIES) {
  for (const engine of ENGINES) {
    describe.skipIf(f.skip)(`feedback in analytics on ${f.name} + ${engine.name}`, () => {
      let store: Awaited<ReturnType<(typeof f)["open"]>>;
      let activity: ActivityStore;
      let s: ListeningApp;
      let keyA: Awaited<ReturnType<typeof createKey>>;
      let keyB: Awaited<ReturnType<typeof createKey>>;
      /** The generations: chat and responses by A on day 1; messages, embeddings and a quiet chat by B on day 2. */
      const gen: Record<"chat" | "responses" | "messages" | "embeddings" | "quiet", string> = {
        chat: "",
        responses: "",
        messages: "",
        embeddings: "",
        quiet: "",
      };
      let other: { key: string; generation: string };

      const post = async (key: string, path: string, body: unknown): Promise<string> => {
        const r = await fetch(`${s.baseUrl}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        expect(r.status, await r.clone().text()).toBe(200);
        const id = r.headers.get("x-gatehouse-generation-id");
        expect(id).toBeTruthy();
        await r.arrayBuffer();
        return id!;
      };
      const served = async (key: string, at: string, path: string, body: unknown): Promise<string> => {
        s.clock.set(at);
        const id = await post(key, path, body);
        await s.app.gateway.recorder.settled();
        return id;
      };
      const feedback = (generation_id: string, category: string, key = s.key) =>
        fetch(`${s.baseUrl}/generation/feedback`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ generation_id, category, comment: "from the feedback test" }),
        });
      const query = async (body: Record<string, unknown>, key = s.key) => {
        const r = await fetch(`${s.baseUrl}/analytics/query`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ time_range: range, ...body }),
        });
        const json = (await r.json()) as { data: { data: Record<string, unknown>[]; cachedAt?: number } };
        expect(r.status, JSON.stringify(json)).toBe(200);
        return json.data;
      };

      beforeAll(async () => {
        store = await f.open();
        activity = await engine.open();
        s = await startListening({
          store,
          activity,
          config: { analytics: { queryTimeoutMs: 30_000, cacheTtlMs: 60_000 } },
        });
        const ws = await createWorkspace(s, "Research", "research");
        keyA = await createKey(s, "Key A");
        keyB = await createKey(s, "Key B", { workspace_id: ws });
        gen.chat = await served(keyA.key, DAY1, "/chat/completions", { model: "mock/echo", messages: HI });
        gen.responses = await served(keyA.key, DAY1, "/responses", { model: "mock/echo", input: "Hi" });
        gen.messages = await served(keyB.key, DAY2, "/messages", {
          model: "mock/echo",
          max_tokens: 64,
          messages: HI,
        });
        gen.embeddings = await served(keyB.key, DAY2, "/embeddings", { model: "mock/embed", input: "Hi" });
        gen.quiet = (await chat(s, keyB.key, { model: "mock/echo" })).id!;
        await s.app.gateway.recorder.settled();

        // Another organization on the same stores, with a generation and feedback of its own.
        const org2 = await createOrganization(store, s.clock, "Other organization");
        const key2 = await s.call({
          method: "POST",
          url: "/api/v1/keys",
          payload: { name: "Other key" },
          auth: org2.managementKey,
        });
        expect(key2.statusCode).toBe(201);
        other = {
          key: org2.managementKey,
          generation: await served(key2.json<{ key: string }>().key, DAY1, "/chat/completions", {
            model: "mock/echo",
            messages: HI,
          }),
        };

        // Submitted later than the generations (the clock is at LATER from here on).
        s.clock.set(LATER);
        for (const [id, category] of [
          [gen.chat, "latency"],
          [gen.chat, "latency"],
          [gen.chat, "formatting"],
          [gen.responses, "incoherence"],
          [gen.messages, "latency"],
          [gen.embeddings, "api_error"],
        ] as const) {
          const r = await feedback(id, category);
          expect(r.status, await r.clone().text()).toBe(200);
          expect(await r.json()).toEqual({ data: { success: true } });
        }
        for (const category of ["latency", "latency", "billing", "other", "other"]) {
          expect((await feedback(other.generation, category, other.key)).status).toBe(200);
        }
      }, 120_000);
      afterAll(async () => {
        await s?.close();
        await activity?.close();
        await store?.dispose();
      });

      it("GET /analytics/meta lists the feedback metrics like every metric", async () => {
        const r = await fetch(`${s.baseUrl}/analytics/meta`, {
          headers: { authorization: `Bearer ${s.key}` },
        });
        const meta = ((await r.json()) as { data: { metrics: { name: string }[] } }).data;
        expect(meta.metrics).toEqual(
          expect.arrayContaining([
            {
              name: "feedback_count",
              display_label: "Feedback Count",
              is_rate: false,
              display_format: "number",
            },
            {
              name: "feedback_api_error_count",
              display_label: "API Error Feedback Count",
              is_rate: false,
              display_format: "number",
            },
          ]),
        );
      });

      it("by model, key and API surface: the feedback on that group's generations, per category", async () => {
        const byModel = await query({
          metrics: ["feedback_count", "feedback_latency_count", "request_count"],
          dimensions: ["model"],
          order_by: { field: "feedback_count", direction: "desc" },
        });
        expect(byModel.data).toEqual([
          { model: "mock/echo", feedback_count: 5, feedback_latency_count: 3, request_count: 4 },
          { model: "mock/embed", feedback_count: 1, feedback_latency_count: 0, request_count: 1 },
        ]);

        const byKey = await query({
          metrics: ["feedback_count", "feedback_formatting_count", "feedback_api_error_count"],
          dimensions: ["api_key_id"],
          order_by: { field: "feedback_count", direction: "desc" },
        });
        expect(byKey.data).toEqual([
          {
            api_key_id: "Key A",
            feedback_count: 4,
            feedback_formatting_count: 1,
            feedback_api_error_count: 0,
          },
          {
            api_key_id: "Key B",
            feedback_count: 2,
            feedback_formatting_count: 0,
            feedback_api_error_count: 1,
          },
        ]);

        const byApi = await query({
          metrics: ["feedback_count", "request_count"],
          dimensions: ["api"],
          order_by: { field: "api", direction: "asc" },
        });
        expect(byApi.data).toEqual([
          { api: "chat", feedback_count: 3, request_count: 2 },
          { api: "embeddings", feedback_count: 1, request_count: 1 },
          { api: "messages", feedback_count: 1, request_count: 1 },
          { api: "responses", feedback_count: 1, request_count: 1 },
        ]);

        // Filters select the generations; their feedback follows.
        const onlyB = await query({
          metrics: ["feedback_count", "feedback_incoherence_count"],
          filters: [{ field: "api_key_id", operator: "eq", value: keyB.hash }],
        });
        expect(onlyB.data).toEqual([{ feedback_count: 2, feedback_incoherence_count: 0 }]);
        const perGeneration = await query({
          metrics: ["feedback_count"],
          dimensions: ["generation_id"],
          filters: [{ field: "generation_id", operator: "in", value: [gen.chat, gen.quiet] }],
          order_by: { field: "feedback_count", direction: "asc" },
        });
        expect(perGeneration.data).toEqual([
          { generation_id: gen.quiet, feedback_count: 0 },
          { generation_id: gen.chat, feedback_count: 3 },
        ]);
      });

      it("over time: counted at the generations' day, not the submission's; windows without them count none", async () => {
        const daily = await query({
          metrics: ["feedback_count", "feedback_latency_count"],
          granularity: "day",
        });
        expect(daily.data).toEqual([
          { date__day: "2026-11-17T00:00:00.000Z", feedback_count: 2, feedback_latency_count: 1 },
          { date__day: "2026-11-16T00:00:00.000Z", feedback_count: 4, feedback_latency_count: 2 },
        ]);
        // The day the feedback was submitted has no generations: nothing to count there.
        const submissionDayOnly = await query({
          metrics: ["feedback_count"],
          time_range: { start: "2026-11-18T00:00:00Z", end: "2026-11-19T00:00:00Z" },
        });
        expect(submissionDayOnly.data).toEqual([{ feedback_count: 0 }]);
        const day2 = await query({
          metrics: ["feedback_count", "feedback_api_error_count"],
          dimensions: ["api"],
          time_range: { start: "2026-11-17T00:00:00Z", end: "2026-11-18T00:00:00Z" },
          order_by: { field: "api", direction: "asc" },
        });
        expect(day2.data).toEqual([
          { api: "chat", feedback_count: 0, feedback_api_error_count: 0 },
          { api: "embeddings", feedback_count: 1, feedback_api_error_count: 1 },
          { api: "messages", feedback_count: 1, feedback_api_error_count: 0 },
        ]);
      });

      it("the official SDK reads the feedback metrics; a new submission invalidates a cached answer", async () => {
        const body = { metrics: ["feedback_count", "feedback_other_count"], dimensions: ["api"] };
        // The SDK keeps `{}` of a row (compatibility-facts §0): the rows are read from the raw body.
        await s.sdkWithRaw().analytics.queryAnalytics({
          requestBody: { ...body, timeRange: { start: new Date(range.start), end: new Date(range.end) } },
        });
        const raw = s.lastRaw() as { data: { data: unknown[] } };
        expect(raw.data.data).toEqual(
          expect.arrayContaining([{ api: "responses", feedback_count: 1, feedback_other_count: 0 }]),
        );
        expect((await query(body)).cachedAt).toBeUndefined();
        expect((await query(body)).cachedAt).toBeDefined();
        expect((await feedback(gen.responses, "other")).status).toBe(200);
        const after = await query(body);
        expect(after.cachedAt).toBeUndefined();
        expect(after.data).toEqual(
          expect.arrayContaining([{ api: "responses", feedback_count: 2, feedback_other_count: 1 }]),
        );
      });

      it("another organization's feedback never shows; its key cannot submit on this organization's generations", async () => {
        const mine = await query({ metrics: ["feedback_count", "feedback_billing_count"] });
        expect(mine.data).toEqual([{ feedback_count: expect.any(Number), feedback_billing_count: 0 }]);
        const theirs = await query(
          { metrics: ["feedback_count", "feedback_other_count"], dimensions: ["model"] },
          other.key,
        );
        expect(theirs.data).toEqual([{ model: "mock/echo", feedback_count: 5, feedback_other_count: 2 }]);
        const r = await feedback(gen.chat, "billing", other.key);
        expect(r.status).toBe(404);
        expect((await query({ metrics: ["feedback_billing_count"] })).data).toEqual([
          { feedback_billing_count: 0 },
        ]);
      });
    });
  }
}

describe("feedback when the activity store refuses the write", () => {
  let s: ListeningApp;
  let duck: ActivityStore;
  let refusing = true;
  const lines: string[] = [];
  beforeAll(async () => {
    duck = await openDuckDbActivityStore({ path: ":memory:" });
    const activity: ActivityStore = {
      ...duck,
      insertFeedback: (rows) =>
        refusing ? Promise.reject(new Error("activity store unreachable")) : duck.insertFeedback(rows),
    };
    s = await startListening({
      activity,
      config: { analytics: { queryTimeoutMs: 30_000, cacheTtlMs: 0 } },
      logger: { level: "warn", stream: { write: (l: string) => void lines.push(l) } },
    });
  });
  afterAll(async () => {
    await s?.close();
    await duck?.close();
  });

  it("is still 200 (stored), logged, and counted once a later pass writes it", async () => {
    const app = await createKey(s, "app");
    const id = (await chat(s, app.key, { model: "mock/echo" })).id!;
    await s.app.gateway.recorder.settled();
    const r = await fetch(`${s.baseUrl}/generation/feedback`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
      body: JSON.stringify({ generation_id: id, category: "billing" }),
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ data: { success: true } });
    expect(lines.some((l) => l.includes("generation feedback not written to the activity store yet"))).toBe(
      true,
    );
    const counted = async () => {
      const q = await s.call({
        method: "POST",
        url: "/api/v1/analytics/query",
        payload: {
          metrics: ["feedback_billing_count"],
          time_range: { start: "2026-11-18T00:00:00Z", end: "2026-11-19T00:00:00Z" },
        },
      });
      return q.json<{ data: { data: { feedback_billing_count: number }[] } }>().data.data[0]!
        .feedback_billing_count;
    };
    expect(await counted()).toBe(0);
    // GET /generation reads the record store: the feedback is there.
    const g = await s.call({ method: "GET", url: `/api/v1/generation?id=${encodeURIComponent(id)}` });
    expect(g.json<{ data: { feedback_count: number } }>().data.feedback_count).toBe(1);

    refusing = false;
    expect(await s.ctx.feedbackActivity!.drain()).toBe(1);
    expect(await counted()).toBe(1);
  });
});
