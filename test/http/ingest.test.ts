import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readActivityVersion } from "../../src/domain/ingest/repos/activity-version.js";
import { readAppLabels, readUserLabels } from "../../src/domain/ingest/repos/labels-repo.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { hashKey } from "../../src/lib/ids.js";
import type { BatchPreparer } from "../../src/domain/ingest/pipeline/preparer-port.js";
import { startPreparePool } from "../../src/domain/ingest/workers/prepare-pool.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { activityRows, ingest, ndjson, wireRecord } from "./ingest-helpers.js";

const URL = "/api/v1/activity/generations";

/**
 * Every case runs with bodies prepared inline and on a worker pool (what `npm start` uses on the
 * embedded store): the answers must not depend on where a body was parsed and validated.
 */
const pool = startPreparePool(1);
afterAll(() => pool.close());
const MODES: { name: string; preparer?: BatchPreparer }[] = [
  { name: "inline" },
  { name: "worker pool", preparer: pool },
];

for (const mode of MODES) {
  describe(`POST /activity/generations (${mode.name})`, () => {
    let t: TestApp;
    let ordinaryKey: string;
    let creatorKey: { key: string; hash: string; workspaceId: string };
    let otherWorkspace: string;

    beforeAll(async () => {
      t = await makeTestApp({ preparer: mode.preparer });
      const ord = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "ordinary" } });
      ordinaryKey = ord.json().key;
      const ws = await t.call({
        method: "POST",
        url: "/api/v1/workspaces",
        payload: { name: "Second", slug: "second" },
      });
      otherWorkspace = ws.json().data.id;
      const created = await t.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: { name: "with creator", creator_user_id: "user_creator", workspace_id: otherWorkspace },
      });
      creatorKey = {
        key: created.json().key,
        hash: hashKey(created.json().key),
        workspaceId: otherWorkspace,
      };
    });
    afterAll(() => t.close());

    describe("auth, media types and sizes", () => {
      it("401 without a key, 403 for an ordinary key; nothing stored", async () => {
        const rec = wireRecord(t, { id: "auth-1" });
        expect((await ingest(t, [rec], null)).statusCode).toBe(401);
        const res = await ingest(t, [rec], ordinaryKey);
        expect(res.statusCode).toBe(403);
        expect(res.json().error.code).toBe(403);
        expect(await activityRows(t, "id = 'auth-1'")).toEqual([]);
      });

      it("415 for other media types, naming the accepted ones", async () => {
        const res = await t.call({
          method: "POST",
          url: URL,
          payload: "id,usage\n1,2",
          headers: { "content-type": "text/csv" },
        });
        expect(res.statusCode).toBe(415);
        expect(res.json().error.message).toBe(
          "Content-Type: must be application/json or application/x-ndjson",
        );
      });

      it("413 for more than 10,000 records (JSON and NDJSON) and for bodies over 32 MiB", async () => {
        const one = wireRecord(t);
        const many = Array.from({ length: 10_001 }, () => one);
        const json = await ingest(t, many);
        expect(json.statusCode).toBe(413);
        expect(json.json().error.message).toBe("generations: at most 10000 records per request");
        const lines = await ndjson(t, many.map((r) => JSON.stringify(r)).join("\n"));
        expect(lines.statusCode).toBe(413);
        const huge = await t.call({
          method: "POST",
          url: URL,
          payload: `{"generations":[{"id":"${"x".repeat(33 * 1024 * 1024)}"}]}`,
          headers: { "content-type": "application/json" },
        });
        expect(huge.statusCode).toBe(413);
      });

      it("accepts JSON bodies beyond the 1 MiB management limit (up to 10,000 records)", async () => {
        const recs = Array.from({ length: 10_000 }, (_, i) =>
          wireRecord(t, { id: `big-${i}`, origin: "o".repeat(100) }),
        );
        expect(JSON.stringify({ generations: recs }).length).toBeGreaterThan(2 * 1024 * 1024);
        const res = await ingest(t, recs);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ data: { accepted: 10_000, duplicates: 0 } });
      });

      it("unknown query parameters are ignored, as on every other operation; broadcast is still checked", async () => {
        // They were 400 `querystring: must NOT have additional properties`, naming no parameter.
        const rec = wireRecord(t);
        const res = await t.call({
          method: "POST",
          url: `${URL}?source=gateway-7&broadcast=false`,
          payload: { generations: [rec] },
        });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toEqual({ data: { accepted: 1, duplicates: 0 } });
        const bad = await t.call({
          method: "POST",
          url: `${URL}?broadcast=no`,
          payload: { generations: [rec] },
        });
        expect(bad.statusCode).toBe(400);
        expect(bad.json().error.message).toBe("broadcast: must be one of true, false");
      });

      it("400 for a body that is not {generations: [1..]}", async () => {
        const cases: [unknown, string][] = [
          [{}, "generations: is required"],
          [{ generations: {} }, "generations: must be an array"],
          [{ generations: [] }, "generations: at least 1 record"],
          [[wireRecord(t)], "body: must be a JSON object"],
        ];
        for (const [payload, message] of cases) {
          const res = await t.call({ method: "POST", url: URL, payload: payload as object });
          expect(res.statusCode, message).toBe(400);
          expect(res.json().error.message).toBe(message);
        }
        expect((await ndjson(t, "\n\n")).json().error.message).toBe("generations: at least 1 record");
      });
    });

    describe("validation (all or nothing)", () => {
      const cases: [string, Record<string, unknown>, string][] = [
        ["id missing", { id: undefined }, "id: is required"],
        ["id empty", { id: "" }, "id: must be a string of 1 to 128 characters"],
        ["id too long", { id: "x".repeat(129) }, "id: must be a string of 1 to 128 characters"],
        ["id control char", { id: "a\u0001b" }, "id: must not contain control characters"],
        ["id number", { id: 5 }, "id: must be a string"],
        ["created_at missing", { created_at: undefined }, "created_at: is required"],
        ["created_at minutes", { created_at: "2026-11-18T11:00Z" }, "created_at: must be an RFC 3339"],
        ["created_at no offset", { created_at: "2026-11-18T11:00:00" }, "created_at: must be an RFC 3339"],
        ["created_at impossible", { created_at: "2026-02-30T11:00:00Z" }, "created_at: must be an RFC 3339"],
        [
          "created_at future",
          { created_at: "2026-11-20T12:00:01Z" },
          "created_at: must not be more than 24 hours",
        ],
        ["created_at ancient", { created_at: "1999-12-31T23:59:59Z" }, "created_at: must not be before"],
        ["api_key_hash shape", { api_key_hash: "ABC" }, "api_key_hash: must be 64 lowercase hex characters"],
        [
          "api_key_hash unknown",
          { api_key_hash: "0".repeat(64) },
          "api_key_hash: no key with this hash in the organization",
        ],
        ["workspace_id shape", { workspace_id: "default" }, "workspace_id: must be a UUID or null"],
        [
          "workspace_id unknown",
          { workspace_id: "00000000-0000-4000-8000-000000000000" },
          "workspace_id: no such workspace in the organization",
        ],
        ["model missing", { model: undefined }, "model: is required"],
        ["model no slash", { model: "gpt-4o" }, "model: must be a provider/model permaslug"],
        ["provider missing", { provider: undefined }, "provider: is required"],
        ["variant number", { variant: 1 }, "variant: must be a string or null"],
        ["app_id zero", { app_id: 0 }, "app_id: must be an integer >= 1"],
        ["app_id fraction", { app_id: 1.5 }, "app_id: must be an integer >= 1"],
        ["country", { country: "DEU" }, "country: at most 2 characters"],
        ["country digits", { country: "D1" }, "country: must be an ISO 3166-1 alpha-2 code"],
        ["tokens_prompt negative", { tokens_prompt: -1 }, "tokens_prompt: must be an integer >= 0"],
        ["tokens_prompt string", { tokens_prompt: "10" }, "tokens_prompt: must be an integer >= 0"],
        ["tokens_completion missing", { tokens_completion: undefined }, "tokens_completion: is required"],
        [
          "tokens_prompt too large for an exact integer",
          { tokens_prompt: 1152921504606846976 },
          "tokens_prompt: must be at most 9007199254740991 (2^53 - 1, the largest integer kept exactly)",
        ],
        [
          "app_id too large for an exact integer",
          { app_id: 2 ** 53 },
          "app_id: must be at most 9007199254740991 (2^53 - 1, the largest integer kept exactly)",
        ],
        [
          "tokens_prompt largest exact integer",
          { tokens_prompt: Number.MAX_SAFE_INTEGER, usage: "x" },
          "usage: must be a number >= 0",
        ],
        ["tokens_reasoning fraction", { tokens_reasoning: 0.5 }, "tokens_reasoning: must be an integer >= 0"],
        ["tokens_cached negative", { tokens_cached: -3 }, "tokens_cached: must be an integer >= 0"],
        ["is_byok", { is_byok: 1 }, "is_byok: must be a boolean"],
        ["streamed", { streamed: "true" }, "streamed: must be a boolean"],
        ["usage missing", { usage: undefined }, "usage: is required"],
        ["usage negative", { usage: -0.01 }, "usage: must be a number >= 0"],
        ["usage huge", { usage: 2e9 }, "usage: must be at most 1000000000 in absolute value"],
        ["byok_usage_inference", { byok_usage_inference: -1 }, "byok_usage_inference: must be a number >= 0"],
        ["usage_web_fetch", { usage_web_fetch: "0" }, "usage_web_fetch: must be a number >= 0"],
        ["usage_data string", { usage_data: "x" }, "usage_data: must be a number"],
        ["latency missing", { latency_ms: undefined }, "latency_ms: is required"],
        ["latency negative", { latency_ms: -1 }, "latency_ms: must be a number >= 0"],
        ["generation_time_ms", { generation_time_ms: -5 }, "generation_time_ms: must be a number >= 0"],
        ["classifications", { classifications: {} }, "classifications: must be an array"],
        [
          "classifier_id",
          { classifications: [{ classifier_id: "x", dimension_name: "topic", value: "a" }] },
          "classifications[0].classifier_id: must be a UUID",
        ],
        [
          "dimension_name",
          {
            classifications: [
              {
                classifier_id: "11111111-1111-4111-8111-111111111111",
                dimension_name: "Topic-X",
                value: "a",
              },
            ],
          },
          "classifications[0].dimension_name: must be a snake_case name",
        ],
        [
          "classification value",
          {
            classifications: [
              { classifier_id: "11111111-1111-4111-8111-111111111111", dimension_name: "topic", value: "" },
            ],
          },
          "classifications[0].value: must be a string of 1 to 256 characters",
        ],
      ];

      for (const [name, over, message] of cases) {
        it(`400 names the field: ${name}`, async () => {
          const good = wireRecord(t, { id: `ok-${name}` });
          const bad = wireRecord(t, over);
          for (const [k, v] of Object.entries(over)) if (v === undefined) delete bad[k];
          const res = await ingest(t, [good, good, bad]);
          expect(res.statusCode).toBe(400);
          const body = res.json();
          expect(body.error.message.startsWith(`generations[2].${message}`), body.error.message).toBe(true);
          expect(body.error.metadata.problems[0]).toBe(body.error.message);
          expect(await activityRows(t, `id = 'ok-${name}'`)).toEqual([]); // nothing stored
        });
      }

      it("lists up to 100 problems in record order, and counts them all", async () => {
        const recs = Array.from({ length: 150 }, (_, i) =>
          wireRecord(t, { tokens_prompt: -i - 1, usage: -1 }),
        );
        const res = await ingest(t, recs);
        expect(res.statusCode).toBe(400);
        const { message, metadata } = res.json().error;
        expect(message).toBe("generations[0].tokens_prompt: must be an integer >= 0");
        expect(metadata.problems).toHaveLength(100);
        expect(metadata.problems[1]).toBe("generations[0].usage: must be a number >= 0");
        expect(metadata.problems[99]).toBe("generations[49].usage: must be a number >= 0");
      });

      it("rejects a key of another organization (400) and stores nothing", async () => {
        const other = await createOrganization(t.ctx.store, t.clock, "Other");
        const res = await ingest(t, [
          wireRecord(t, { id: "cross-1" }),
          wireRecord(t, { api_key_hash: hashKey(other.managementKey) }),
        ]);
        expect(res.statusCode).toBe(400);
        expect(res.json().error.message).toBe(
          "generations[1].api_key_hash: no key with this hash in the organization",
        );
        const ws = await ingest(t, [wireRecord(t, { workspace_id: other.workspaceId })]);
        expect(ws.json().error.message).toBe(
          "generations[0].workspace_id: no such workspace in the organization",
        );
        expect(await activityRows(t, "id = 'cross-1'")).toEqual([]);
      });

      it("NDJSON lines that are not JSON are problems of their record", async () => {
        const res = await ndjson(
          t,
          `${JSON.stringify(wireRecord(t))}\n{nope\n${JSON.stringify(wireRecord(t))}\n[1]\n`,
        );
        expect(res.statusCode).toBe(400);
        expect(res.json().error.metadata.problems).toEqual([
          "generations[1]: is not valid JSON (line 2)",
          "generations[3]: must be an object",
        ]);
      });
    });

    describe("storage", () => {
      it("applies defaults: key's workspace and creator, zeros and false, derived columns", async () => {
        const res = await ingest(t, [
          wireRecord(t, { id: "defaults-1", api_key_hash: creatorKey.hash, generation_time_ms: 2000 }),
          wireRecord(t, { id: "defaults-legacy", workspace_id: null, user_id: "explicit" }),
        ]);
        expect(res.json()).toEqual({ data: { accepted: 2, duplicates: 0 } });
        const [d, legacy] = await activityRows(t, "id IN ('defaults-1', 'defaults-legacy')");
        expect(d).toMatchObject({
          workspace_id: creatorKey.workspaceId,
          user_id: "user_creator",
          variant: null,
          tokens_reasoning: 0n,
          tokens_cached: 0n,
          is_byok: false,
          streamed: false,
          cancelled: false,
          response_cached: false,
          guardrail_invoked: false,
          byok_usage_inference_nano: 0n,
          usage_data_nano: 0n,
          context_length_bucket: "1K-4K",
          throughput: 100,
          created_at: "2026-11-18T11:00:00.000Z",
        });
        expect(legacy).toMatchObject({ workspace_id: null, user_id: "explicit" });
      });

      it("stores money exactly (decimal, never float arithmetic) and timestamps in UTC", async () => {
        await ingest(t, [
          wireRecord(t, {
            id: "money-1",
            usage: 0.1 + 0.2,
            byok_usage_inference: 0.0000000015,
            usage_data: -0.000000001,
            usage_upstream: 123456.789012345,
            created_at: "2026-11-18T13:30:00.250+01:00",
            country: "de",
          }),
        ]);
        const [r] = await activityRows(t, "id = 'money-1'");
        expect(r).toMatchObject({
          usage_nano: 300_000_000n,
          byok_usage_inference_nano: 2n,
          usage_data_nano: -1n,
          usage_upstream_nano: 123_456_789_012_345n,
          created_at: "2026-11-18T12:30:00.250Z",
          country: "DE",
        });
      });

      it("is idempotent by id: duplicates counted, first write wins, also inside one batch", async () => {
        const a = wireRecord(t, { id: "dup-a", usage: 1 });
        const first = await ingest(t, [a, { ...a, usage: 5 }, wireRecord(t, { id: "dup-b", usage: 2 })]);
        expect(first.json()).toEqual({ data: { accepted: 2, duplicates: 1 } });
        const again = await ndjson(
          t,
          [{ ...a, usage: 9 }, wireRecord(t, { id: "dup-c" })].map((r) => JSON.stringify(r)).join("\r\n"),
        );
        expect(again.json()).toEqual({ data: { accepted: 1, duplicates: 1 } });
        const rows = await activityRows(t, "id IN ('dup-a', 'dup-b', 'dup-c')");
        expect(rows.map((r) => [r.id, r.usage_nano])).toEqual([
          ["dup-a", 1_000_000_000n],
          ["dup-b", 2_000_000_000n],
          ["dup-c", 250_000_000n],
        ]);
      });

      it("stores classifications with their generation", async () => {
        const classifier = "22222222-2222-4222-8222-222222222222";
        await ingest(t, [
          wireRecord(t, {
            id: "tagged-1",
            classifications: [
              { classifier_id: classifier, dimension_name: "topic", value: "billing" },
              { classifier_id: classifier, dimension_name: "sentiment", value: "happy" },
            ],
          }),
        ]);
        const tags = await t.ctx.activity.query(
          {
            sql: "SELECT dimension_name, value, workspace_id FROM generation_tags WHERE organization_id = $org AND generation_id = 'tagged-1' ORDER BY 1",
            params: { org: t.organizationId },
          },
          { timeoutMs: 5_000 },
        );
        expect(tags).toEqual([
          { dimension_name: "sentiment", value: "happy", workspace_id: t.workspaceId },
          { dimension_name: "topic", value: "billing", workspace_id: t.workspaceId },
        ]);
      });

      it("keeps the latest seen labels and bumps the activity version only when something is accepted", async () => {
        const v0 = await readActivityVersion(t.ctx.store.db, t.organizationId);
        await ingest(t, [
          wireRecord(t, {
            id: "lab-1",
            app_id: 7,
            app_title: "Old",
            user_id: "u1",
            user_name: "Ann",
            user_email: "a@x",
          }),
          wireRecord(t, { id: "lab-2", app_id: 7, app_title: "New", user_id: "u1", user_name: "Anna" }),
          wireRecord(t, { id: "lab-3", app_id: 8 }),
        ]);
        expect(await readAppLabels(t.ctx.store.db, t.organizationId, [7, 8])).toEqual(new Map([[7, "New"]]));
        expect(await readUserLabels(t.ctx.store.db, t.organizationId, ["u1"])).toEqual(
          new Map([["u1", { name: "Anna", email: "a@x" }]]),
        );
        const v1 = await readActivityVersion(t.ctx.store.db, t.organizationId);
        expect(v1).toBe(v0 + 1n);
        await ingest(t, [wireRecord(t, { id: "lab-1", app_id: 7, app_title: "Ignored (duplicate)" })]);
        expect(await readActivityVersion(t.ctx.store.db, t.organizationId)).toBe(v1);
        expect((await readAppLabels(t.ctx.store.db, t.organizationId)).get(7)).toBe("New");
      });
    });
  });

  describe(`read-your-writes: key usage and budget spend reflect the batch at once (${mode.name})`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await makeTestApp({ preparer: mode.preparer });
    });
    afterAll(() => t.close());

    it("updates the key's usage windows and the workspace budget spend", async () => {
      const created = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "spender" } });
      const key = created.json().key as string;
      const hash = hashKey(key);
      await t.call({
        method: "PUT",
        url: "/api/v1/workspaces/default/budgets/monthly",
        payload: { limit_usd: 100 },
      });
      const res = await ingest(t, [
        wireRecord(t, { api_key_hash: hash, usage: 1.5, created_at: "2026-11-18T10:00:00Z" }),
        wireRecord(t, {
          api_key_hash: hash,
          usage: 0.25,
          is_byok: true,
          byok_usage_inference: 3,
          created_at: "2026-11-16T00:00:00Z",
        }),
        wireRecord(t, { api_key_hash: hash, usage: 10, created_at: "2026-11-01T00:00:00Z" }), // this month, last week
        wireRecord(t, { api_key_hash: hash, usage: 100, created_at: "2026-10-31T23:59:59Z" }), // last month
        wireRecord(t, { api_key_hash: hash, usage: 0.000000001, workspace_id: null }), // legacy: default workspace
      ]);
      expect(res.json()).toEqual({ data: { accepted: 5, duplicates: 0 } });
      const k = (await t.call({ method: "GET", url: `/api/v1/keys/${hash}` })).json().data;
      expect(k).toMatchObject({
        usage: 111.750000001,
        usage_daily: 1.500000001,
        usage_weekly: 1.750000001,
        usage_monthly: 11.750000001,
        byok_usage: 3,
        byok_usage_daily: 0,
        byok_usage_weekly: 3,
        byok_usage_monthly: 3,
      });
      const budget = (
        await t.call({ method: "GET", url: "/api/v1/workspaces/default/budgets/monthly" })
      ).json().data;
      expect(budget.spent_usd).toBe(11.750000001);
      expect(budget.remaining_usd).toBe(88.249999999);
    });
  });
}
