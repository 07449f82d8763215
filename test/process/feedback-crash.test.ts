import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findGenerationDetail } from "../../src/domain/generation-details/generation-details-repo.js";
import { storeFeedback } from "../../src/domain/generation-feedback/feedback-activity.js";
import { hashKey } from "../../src/lib/ids.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { killAll, type ChildServer } from "../helpers/child-server.js";
import { crashableServer } from "../helpers/crash-restart.js";
import { chat } from "../helpers/gateway-client.js";

/**
 * Feedback survives the process dying between its record-store commit and its activity-store
 * write: the compiled server (SQLite + DuckDB files) is killed with SIGKILL, the state that death
 * leaves (a stored, queued submission the activity store lacks) is written to its record store,
 * and the restarted server counts it from its first query on.
 */
afterAll(killAll);

const json = async <T>(r: Response): Promise<T> => {
  const text = await r.text();
  expect(r.status, text).toBeLessThan(300);
  return JSON.parse(text) as T;
};

describe("feedback queued when the process died reaches analytics at the next start", () => {
  it("SIGKILL after the commit, before the activity write: counted once after the restart", async () => {
    const crashable = crashableServer();
    const { key, dataDir } = crashable;
    const post = (s: ChildServer, path: string, body: unknown) =>
      fetch(`${s.base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const feedbackByGeneration = async (s: ChildServer, ids: string[]) => {
      const start = new Date(Date.now() - 86_400_000).toISOString().replace(/\.\d+Z$/, "Z");
      const end = new Date(Date.now() + 60_000).toISOString().replace(/\.\d+Z$/, "Z");
      const body = await json<{ data: { data: { generation_id: string; feedback_count: number }[] } }>(
        await post(s, "/analytics/query", {
          metrics: ["feedback_count", "feedback_latency_count"],
          dimensions: ["generation_id"],
          filters: [{ field: "generation_id", operator: "in", value: ids }],
          order_by: { field: "generation_id", direction: "asc" },
          time_range: { start, end },
        }),
      );
      return Object.fromEntries(body.data.data.map((r) => [r.generation_id, r]));
    };

    let s = await crashable.start();
    const app = (await json<{ key: string }>(await post(s, "/keys", { name: "app" }))).key;
    const first = (await chat(s.base, app, { model: "mock/echo" })).id!;
    const second = (await chat(s.base, app, { model: "mock/echo" })).id!;
    expect(
      (await post(s, "/generation/feedback", { generation_id: first, category: "latency" })).status,
    ).toBe(200);
    expect(await feedbackByGeneration(s, [first, second])).toEqual({
      [first]: { generation_id: first, feedback_count: 1, feedback_latency_count: 1 },
      [second]: { generation_id: second, feedback_count: 0, feedback_latency_count: 0 },
    });

    await crashable.kill(s);
    // What the dead process left: a submission stored and queued in one commit, never written to
    // the activity store (its pass would have run next).
    const store = await openSqliteStore(join(dataDir, "gatehouse.sqlite"));
    try {
      const key = await store.db
        .selectFrom("api_keys")
        .select("organization_id")
        .where("hash", "=", hashKey(app))
        .executeTakeFirstOrThrow();
      const detail = (await findGenerationDetail(store.db, key.organization_id, second))!;
      await storeFeedback(
        store,
        {
          id: "feedback-of-the-dead-process",
          organizationId: key.organization_id,
          generationId: second,
          category: "incoherence",
          comment: null,
          keyHash: hashKey(crashable.key),
          createdAt: new Date().toISOString(),
        },
        Date.parse(detail.createdAt),
      );
    } finally {
      await store.close();
    }

    s = await crashable.start();
    const after = await feedbackByGeneration(s, [first, second]);
    expect(after[second]).toEqual({ generation_id: second, feedback_count: 1, feedback_latency_count: 0 });
    expect(after[first]).toEqual({ generation_id: first, feedback_count: 1, feedback_latency_count: 1 });
    // GET /generation (the record store) and analytics agree.
    const generation = await json<{ data: { feedback_count: number } }>(
      await fetch(`${s.base}/generation?id=${encodeURIComponent(second)}`, {
        headers: { authorization: `Bearer ${key}` },
      }),
    );
    expect(generation.data.feedback_count).toBe(1);
    await crashable.stop(s);
  }, 120_000);
});
