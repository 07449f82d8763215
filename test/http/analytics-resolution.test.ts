import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { hashKey } from "../../src/lib/ids.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { CLF, createKey, createWorkspace, query } from "./analytics-helpers.js";
import { ingest, wireRecord } from "./ingest-helpers.js";

const range = { start: "2026-11-10T00:00:00Z", end: "2026-11-18T12:00:00Z" };
const rows = (res: { json(): { data: { data: unknown[] } } }) => res.json().data.data;

/** Filter value resolution, labels, legacy activity, classifiers and hostile input, through inject. */
describe("analytics: resolution, labels, classifiers, injection", () => {
  let t: TestApp;
  let keyA: { key: string; hash: string; id: number };
  let keyB: { key: string; hash: string; id: number };
  let ws2: string;
  beforeAll(async () => {
    t = await makeTestApp();
    ws2 = await createWorkspace(t, "Research", "research");
    keyA = await createKey(t, "Key A");
    keyB = await createKey(t, "Key B", { workspace_id: ws2 });
    const a = hashKey(keyA.key);
    const b = hashKey(keyB.key);
    const res = await ingest(t, [
      wireRecord(t, {
        id: "r1",
        api_key_hash: a,
        user_id: "user_1",
        user_name: "Ann",
        user_email: "ann@example.com",
        app_id: 7,
        app_title: "Chat",
      }),
      wireRecord(t, {
        id: "r2",
        api_key_hash: a,
        workspace_id: null,
        user_id: "user_2",
        variant: "free",
        origin: "x' OR 1=1 --",
      }),
      wireRecord(t, {
        id: "r3",
        api_key_hash: b,
        app_id: 8,
        classifications: [{ classifier_id: CLF, dimension_name: "topic", value: "billing" }],
      }),
      wireRecord(t, {
        id: "r4",
        api_key_hash: b,
        classifications: [
          { classifier_id: CLF, dimension_name: "topic", value: "sales" },
          { classifier_id: CLF, dimension_name: "lang", value: "en" },
        ],
      }),
    ]);
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(() => t.close());

  describe("filter values", () => {
    it("api_key_id accepts the numeric id or the key hash", async () => {
      for (const value of [keyA.id, keyA.hash]) {
        const res = await query(t, {
          metrics: ["request_count"],
          filters: [{ field: "api_key_id", operator: "eq", value }],
          time_range: range,
        });
        expect(rows(res)).toEqual([{ request_count: 2 }]);
        expect(res.json().data).not.toHaveProperty("warnings");
      }
      const both = await query(t, {
        metrics: ["request_count"],
        filters: [{ field: "api_key_id", operator: "in", value: [keyA.hash, keyB.id] }],
        time_range: range,
      });
      expect(rows(both)).toEqual([{ request_count: 4 }]);
    });

    it("api_key_id takes the key hash in capitals too (hexadecimal, like a /keys/{hash} path)", async () => {
      const res = await query(t, {
        metrics: ["request_count"],
        filters: [{ field: "api_key_id", operator: "in", value: [keyA.hash.toUpperCase(), keyB.id] }],
        time_range: range,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(rows(res)).toEqual([{ request_count: 4 }]);
      expect(res.json().data).not.toHaveProperty("warnings");
    });

    it("an unknown hash is a warning and matches no rows; the query still runs", async () => {
      const unknown = "f".repeat(64);
      const res = await query(t, {
        metrics: ["request_count"],
        filters: [{ field: "api_key_id", operator: "eq", value: unknown }],
        time_range: range,
      });
      expect(res.statusCode).toBe(200);
      expect(rows(res)).toEqual([{ request_count: 0 }]);
      expect(res.json().data.warnings).toEqual([
        `filters[0].value: API key ${unknown} was not found in this organization; it matches no rows`,
      ]);
      const partial = await query(t, {
        metrics: ["request_count"],
        filters: [{ field: "api_key_id", operator: "in", value: [unknown, keyB.hash] }],
        time_range: range,
      });
      expect(rows(partial)).toEqual([{ request_count: 2 }]);
      expect(partial.json().data.warnings).toHaveLength(1);
      const excluded = await query(t, {
        metrics: ["request_count"],
        filters: [{ field: "api_key_id", operator: "not_in", value: [unknown] }],
        time_range: range,
      });
      expect(rows(excluded)).toEqual([{ request_count: 4 }]);
    });

    it("a key of another organization resolves to nothing (no existence leak beyond the warning)", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const otherHash = hashKey(other.managementKey);
      const res = await query(t, {
        metrics: ["request_count"],
        filters: [{ field: "api_key_id", operator: "eq", value: otherHash }],
        time_range: range,
      });
      expect(rows(res)).toEqual([{ request_count: 0 }]);
      expect(res.json().data.warnings[0]).toContain("was not found in this organization");
      // And the other organization sees none of this organization's activity.
      const theirs = await query(t, { metrics: ["request_count"], time_range: range }, other.managementKey);
      expect(rows(theirs)).toEqual([{ request_count: 0 }]);
    });

    it("an unknown workspace is a warning; the default workspace also covers legacy activity", async () => {
      const unknown = "00000000-0000-4000-8000-00000000abcd";
      const res = await query(t, {
        metrics: ["request_count"],
        filters: [{ field: "workspace", operator: "eq", value: unknown }],
        time_range: range,
      });
      expect(rows(res)).toEqual([{ request_count: 0 }]);
      expect(res.json().data.warnings).toEqual([
        `filters[0].value: workspace ${unknown} was not found in this organization; it matches no rows`,
      ]);
      const def = await query(t, {
        metrics: ["request_count"],
        filters: [{ field: "workspace", operator: "eq", value: t.workspaceId }],
        time_range: range,
      });
      expect(rows(def)).toEqual([{ request_count: 2 }]); // r1 and legacy r2
    });
  });

  describe("labels in rows", () => {
    it("api_key_id → key name, workspace → workspace name (legacy activity in the default workspace)", async () => {
      const res = await query(t, {
        metrics: ["request_count"],
        dimensions: ["workspace", "api_key_id"],
        time_range: range,
      });
      // Equal counts: ties are broken by the underlying ids (random UUIDs here), not by labels.
      expect(rows(res)).toHaveLength(2);
      expect(rows(res)).toEqual(
        expect.arrayContaining([
          { workspace: "Default", api_key_id: "Key A", request_count: 2 },
          { workspace: "Research", api_key_id: "Key B", request_count: 2 },
        ]),
      );
    });

    it("user → name plus user_email; a user without a label shows the raw id; unset → null", async () => {
      const res = await query(t, {
        metrics: ["request_count"],
        dimensions: ["user"],
        order_by: { field: "user", direction: "asc" },
        time_range: range,
      });
      expect(rows(res)).toEqual([
        { user: "Ann", user_email: "ann@example.com", request_count: 1 },
        { user: "user_2", user_email: null, request_count: 1 },
        { user: null, user_email: null, request_count: 2 },
      ]);
    });

    it("app → title; an app without a title shows its id", async () => {
      const res = await query(t, {
        metrics: ["request_count"],
        dimensions: ["app"],
        order_by: { field: "app", direction: "asc" },
        time_range: range,
      });
      expect(rows(res)).toEqual([
        { app: "Chat", request_count: 1 },
        { app: "8", request_count: 1 },
        { app: null, request_count: 2 },
      ]);
    });

    it("a renamed key shows its new name (labels are read at query time)", async () => {
      await t.call({ method: "PATCH", url: `/api/v1/keys/${keyA.hash}`, payload: { name: "Key A renamed" } });
      const res = await query(t, {
        metrics: ["request_count"],
        dimensions: ["api_key_id"],
        filters: [{ field: "api_key_id", operator: "eq", value: keyA.id }],
        limit: 7, // a different request: not served from the cache
        time_range: range,
      });
      expect(rows(res)).toEqual([{ api_key_id: "Key A renamed", request_count: 2 }]);
    });
  });

  describe("classifiers", () => {
    it("no dimension_names: clf_dimension_name / clf_dimension_value pairs", async () => {
      const res = await query(t, {
        metrics: ["request_count"],
        classifier_dimensions: { classifier_id: CLF },
        time_range: range,
      });
      expect(rows(res)).toEqual([
        { clf_dimension_name: "lang", clf_dimension_value: "en", request_count: 1 },
        { clf_dimension_name: "topic", clf_dimension_value: "billing", request_count: 1 },
        { clf_dimension_name: "topic", clf_dimension_value: "sales", request_count: 1 },
      ]);
    });

    it("named columns cross-group; include_nulls adds unclassified generations", async () => {
      const named = await query(t, {
        metrics: ["request_count"],
        classifier_dimensions: { classifier_id: CLF, dimension_names: ["topic"], include_nulls: true },
        order_by: { field: "topic", direction: "asc" },
        time_range: range,
      });
      expect(rows(named)).toEqual([
        { topic: "billing", request_count: 1 },
        { topic: "sales", request_count: 1 },
        { topic: null, request_count: 2 },
      ]);
      const cross = await query(t, {
        metrics: ["request_count"],
        classifier_dimensions: { classifier_id: CLF, dimension_names: ["topic", "lang"] },
        time_range: range,
      });
      expect(rows(cross)).toEqual([{ topic: "sales", lang: "en", request_count: 1 }]);
    });

    it("classifier_filters alone with ordinary dimensions", async () => {
      const res = await query(t, {
        metrics: ["request_count"],
        dimensions: ["api_key_id"],
        classifier_filters: {
          classifier_id: CLF,
          filters: [{ field: "topic", operator: "in", value: ["billing", "sales"] }],
        },
        time_range: range,
      });
      expect(rows(res)).toEqual([{ api_key_id: "Key B", request_count: 2 }]);
    });

    it("a classifier that never tagged a generation here is 400", async () => {
      const res = await query(t, {
        metrics: ["request_count"],
        classifier_dimensions: { classifier_id: "33333333-3333-4333-8333-333333333333" },
        time_range: range,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toMatch(
        /^classifier_dimensions\.classifier_id: no active classifier with this id/,
      );
      const onDefault = await query(t, {
        metrics: ["request_count"],
        filters: [{ field: "workspace", operator: "eq", value: t.workspaceId }],
        classifier_filters: {
          classifier_id: CLF,
          filters: [{ field: "topic", operator: "eq", value: "billing" }],
        },
        time_range: range,
      });
      expect(onDefault.statusCode).toBe(400); // CLF tagged only generations of the Research workspace
      expect(onDefault.json().error.message).toContain("on the filtered workspaces");
    });
  });

  describe("hostile input", () => {
    it("hostile metric, dimension, order and classifier names are rejected before any SQL", async () => {
      for (const payload of [
        { metrics: ["request_count) FROM generations; --"] },
        { metrics: ["request_count"], dimensions: ["model; DROP TABLE generations"] },
        { metrics: ["request_count"], filters: [{ field: "1=1 OR model", operator: "eq", value: "a" }] },
        { metrics: ["request_count"], order_by: { field: "request_count DESC; --", direction: "asc" } },
        {
          metrics: ["request_count"],
          classifier_dimensions: { classifier_id: CLF, dimension_names: ["x' OR '1'='1"] },
        },
      ]) {
        const res = await query(t, payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      }
    });

    it("hostile filter values are bound: they match only themselves", async () => {
      const eq = await query(t, {
        metrics: ["request_count"],
        filters: [{ field: "origin", operator: "eq", value: "x' OR 1=1 --" }],
        time_range: range,
      });
      expect(rows(eq)).toEqual([{ request_count: 1 }]);
      for (const value of [
        "' OR '1'='1",
        "a\\' OR 1=1 --",
        "{p0:String}",
        "$p0",
        "'; DROP TABLE generations; --",
      ]) {
        const res = await query(t, {
          metrics: ["request_count"],
          filters: [{ field: "model", operator: "eq", value }],
          time_range: range,
        });
        expect(res.statusCode).toBe(200);
        expect(rows(res)).toEqual([{ request_count: 0 }]);
      }
      const tag = await query(t, {
        metrics: ["request_count"],
        classifier_filters: {
          classifier_id: CLF,
          filters: [{ field: "topic", operator: "in", value: ["billing' OR '1'='1"] }],
        },
        time_range: range,
      });
      expect(rows(tag)).toEqual([{ request_count: 0 }]);
      const all = await query(t, { metrics: ["request_count"], time_range: range });
      expect(rows(all)).toEqual([{ request_count: 4 }]);
    });
  });
});
