import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openChdbActivityStore } from "../../src/stores/clickhouse/chdb-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";
import { CLF, createKey, createWorkspace, query } from "./analytics-helpers.js";
import { ingest, wireRecord } from "./ingest-helpers.js";

const ENGINES: { name: string; open: () => Promise<ActivityStore> }[] = [
  { name: "duckdb", open: () => openDuckDbActivityStore({ path: ":memory:" }) },
  { name: "clickhouse (chdb)", open: () => openChdbActivityStore() },
];

const range = { start: "2026-11-10T00:00:00Z", end: "2026-11-18T12:00:00Z" };

/**
 * The whole query path on every record store (key and workspace resolution, labels, the default
 * workspace, the activity version) and every activity engine: the same answers everywhere.
 */
for (const f of STORE_FACTORIES) {
  for (const engine of ENGINES) {
    describe.skipIf(f.skip)(`analytics on ${f.name} + ${engine.name}`, () => {
      let t: TestApp;
      let store: Awaited<ReturnType<(typeof f)["open"]>>;
      let activity: ActivityStore;
      let keyB: { key: string; hash: string; id: number };
      beforeAll(async () => {
        store = await f.open();
        activity = await engine.open();
        t = await makeTestApp({ store, activity });
        const ws = await createWorkspace(t, "Research", "research");
        keyB = await createKey(t, "Key B", { workspace_id: ws });
        const res = await ingest(t, [
          wireRecord(t, {
            id: "x1",
            usage: 1.5,
            user_id: "u1",
            user_name: "Una",
            user_email: "una@example.com",
            app_id: 4,
            app_title: "Notes",
          }),
          wireRecord(t, { id: "x2", usage: 0.000000001, workspace_id: null }),
          wireRecord(t, {
            id: "x3",
            api_key_hash: hashKey(keyB.key),
            usage: 2.25,
            is_byok: true,
            byok_usage_inference: 3,
            classifications: [{ classifier_id: CLF, dimension_name: "topic", value: "billing" }],
          }),
        ]);
        expect(res.statusCode, res.body).toBe(200);
      });
      afterAll(async () => {
        await t?.close();
        await activity?.close();
        await store?.dispose();
      });

      it("resolves key hashes and workspaces, attributes legacy activity, labels rows", async () => {
        const byWs = await query(t, {
          metrics: ["request_count", "credits_usage", "total_usage"],
          dimensions: ["workspace"],
          order_by: { field: "credits_usage", direction: "desc" },
          time_range: range,
        });
        expect(byWs.json().data.data).toEqual([
          { workspace: "Research", request_count: 1, credits_usage: 2.25, total_usage: 5.25 },
          { workspace: "Default", request_count: 2, credits_usage: 1.500000001, total_usage: 1.500000001 },
        ]);
        const byHash = await query(t, {
          metrics: ["byok_fees", "openrouter_usage"],
          dimensions: ["api_key_id"],
          filters: [{ field: "api_key_id", operator: "eq", value: keyB.hash }],
          time_range: range,
        });
        expect(byHash.json().data.data).toEqual([
          { api_key_id: "Key B", byok_fees: 2.25, openrouter_usage: 0 },
        ]);
        const labels = await query(t, {
          metrics: ["request_count"],
          dimensions: ["user", "app"],
          filters: [{ field: "user", operator: "eq", value: "u1" }],
          time_range: range,
        });
        expect(labels.json().data.data).toEqual([
          { user: "Una", user_email: "una@example.com", app: "Notes", request_count: 1 },
        ]);
      });

      it("classifiers and the cache work on this pair", async () => {
        const body = {
          metrics: ["request_count"],
          classifier_dimensions: { classifier_id: CLF, dimension_names: ["topic"] },
          time_range: range,
        };
        const first = await query(t, body);
        expect(first.json().data.data).toEqual([{ topic: "billing", request_count: 1 }]);
        expect((await query(t, body)).json().data.cachedAt).toBeDefined();
        await ingest(t, [
          wireRecord(t, {
            id: "x4",
            classifications: [{ classifier_id: CLF, dimension_name: "topic", value: "billing" }],
          }),
        ]);
        const after = (await query(t, body)).json().data;
        expect(after).not.toHaveProperty("cachedAt");
        expect(after.data).toEqual([{ topic: "billing", request_count: 2 }]);
      });
    });
  }
}
