import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { addInflight } from "../../src/domain/ingest/inflight-repo.js";
import { toRow } from "../../src/domain/ingest/prepare-batch.js";
import { parseRecords, Problems } from "../../src/domain/ingest/validate-generations.js";
import { hashKey } from "../../src/lib/ids.js";
import { nanoToUsd } from "../../src/lib/money.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { ingest, wireRecord } from "./ingest-helpers.js";

/**
 * The embedded fast path writes activity rows without checking for ids already present; the
 * in-flight markers make that safe. These tests leave behind exactly what a crash (or a failed
 * record-store commit) between the activity commit and the record-store commit leaves, then
 * retry: every id ends up once in the activity store and once in the ledger.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Stores {
  store: RecordStore;
  activity: ActivityStore;
}

async function openStores(dir: string): Promise<Stores> {
  return {
    store: await openSqliteStore(join(dir, "gatehouse.sqlite")),
    activity: await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") }),
  };
}

async function counts(t: TestApp, ids: string[]) {
  const rows = await t.ctx.activity.query(
    {
      sql: `SELECT id, count(*) AS n FROM generations WHERE organization_id = $org AND id IN (SELECT unnest($ids))
            GROUP BY id ORDER BY id`,
      params: { org: t.organizationId, ids },
    },
    { timeoutMs: 10_000 },
  );
  return Object.fromEntries(rows.map((r) => [r.id as string, Number(r.n)]));
}

/** Usage of the test app's management key (the key every record here is attributed to). */
const usageOf = async (t: TestApp) =>
  (await t.call({ method: "GET", url: "/api/v1/key" })).json().data.usage as number;

const markers = async (t: TestApp) =>
  (await t.ctx.store.db.selectFrom("ingest_inflight").select("token").execute()).length;

describe("ingest recovery on the embedded fast path (SQLite + DuckDB files)", () => {
  it("after a crash between the two commits, the restarted server deletes the unaccepted rows and the retry counts each record once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gh-ingest-recovery-"));
    dirs.push(dir);
    let s = await openStores(dir);
    let t = await makeTestApp(s);
    const hash = hashKey(t.key);
    const [a, b, c] = ["rec-a", "rec-b", "rec-c"].map((id, i) =>
      wireRecord(t, { id, usage: (i + 1) / 1000, classifications: [tag] }),
    ) as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
    expect((await ingest(t, [b])).json().data).toEqual({ accepted: 1, duplicates: 0 });

    // The crash state of batch [a, b, c]: its new rows (a, c) committed to the activity store with
    // their tags, its marker committed, its record-store transaction never committed.
    const parsed = parseRecords([a, c], t.clock.now().getTime(), new Problems());
    const key = await t.ctx.store.db
      .selectFrom("api_keys")
      .select(["id", "workspace_id", "creator_user_id"])
      .where("hash", "=", hash)
      .executeTakeFirstOrThrow();
    const rows = parsed.map((r) =>
      toRow(r, t.organizationId, {
        id: Number(key.id),
        workspaceId: key.workspace_id,
        creatorUserId: key.creator_user_id,
      }),
    );
    const writer = t.ctx.activity.exclusive;
    if (!writer) throw new Error("the DuckDB store offers the fast path");
    await addInflight(t.ctx.store.db, {
      token: "crashed-batch",
      owner: writer.owner,
      organizationId: t.organizationId,
      minMs: Math.min(...rows.map((r) => r.created_at_ms)),
      maxMs: Math.max(...rows.map((r) => r.created_at_ms)),
      ids: ["rec-a", "rec-b", "rec-c"],
    });
    const tags = rows.map((r) => ({
      organization_id: r.organization_id,
      generation_id: r.id,
      workspace_id: r.workspace_id,
      created_at_ms: r.created_at_ms,
      ...tag,
    }));
    await (await writer.stage(rows, tags)).commit();
    expect(await counts(t, ["rec-a", "rec-b", "rec-c"])).toEqual({ "rec-a": 1, "rec-b": 1, "rec-c": 1 });
    const usageBefore = await usageOf(t);
    expect(usageBefore).toBe(0.002); // only b was accepted

    // Restart on the same files, then the client retries the batch it never got a 200 for.
    await t.close();
    await s.store.close();
    await s.activity.close();
    s = await openStores(dir);
    t = await makeTestApp(s);
    const hash2 = hashKey(t.key);
    const retry = [a, b, c].map((r) => ({ ...r, api_key_hash: hash2 }));
    // The restarted test app has a new organization: move the recovered batch there.
    expect((await ingest(t, retry)).json().data).toEqual({ accepted: 3, duplicates: 0 });
    expect(await markers(t)).toBe(0);

    // The first organization's orphans are gone, its accepted record stays.
    const left = await t.ctx.activity.query(
      { sql: "SELECT organization_id, id FROM generations ORDER BY organization_id, id", params: {} },
      { timeoutMs: 10_000 },
    );
    const firstOrg = left.filter((r) => r.organization_id !== t.organizationId).map((r) => r.id);
    expect(firstOrg).toEqual(["rec-b"]);
    const tagsLeft = await t.ctx.activity.query(
      {
        sql: "SELECT generation_id FROM generation_tags WHERE organization_id <> $org ORDER BY generation_id",
        params: { org: t.organizationId },
      },
      { timeoutMs: 10_000 },
    );
    expect(tagsLeft.map((r) => r.generation_id)).toEqual(["rec-b"]);
    expect(await counts(t, ["rec-a", "rec-b", "rec-c"])).toEqual({ "rec-a": 1, "rec-b": 1, "rec-c": 1 });
    expect(await usageOf(t)).toBe(0.006);
    await t.close();
    await s.store.close();
    await s.activity.close();
  });

  it("after a record-store commit that failed once the activity commit was done, the retry counts each record once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gh-ingest-recovery-"));
    dirs.push(dir);
    const s = await openStores(dir);
    const t = await makeTestApp(s);
    const recs = Array.from({ length: 50 }, (_, i) => wireRecord(t, { id: `f-${i}`, usage: (i + 1) / 1e9 }));
    const transaction = s.store.transaction;
    s.store.transaction = ((fn) =>
      transaction.call(s.store, async (trx) => {
        await fn(trx);
        throw new Error("simulated failure of the record-store commit");
      })) as RecordStore["transaction"];
    try {
      expect((await ingest(t, recs)).statusCode).toBe(500);
    } finally {
      s.store.transaction = transaction;
    }
    expect(
      Object.keys(
        await counts(
          t,
          recs.map((r) => r.id as string),
        ),
      ),
    ).toHaveLength(50); // the orphans
    expect(await usageOf(t)).toBe(0);
    expect(await markers(t)).toBe(1);

    expect((await ingest(t, recs)).json().data).toEqual({ accepted: 50, duplicates: 0 });
    const n = await counts(
      t,
      recs.map((r) => r.id as string),
    );
    expect(Object.values(n).every((x) => x === 1) && Object.keys(n).length === 50).toBe(true);
    expect(await usageOf(t)).toBe(nanoToUsd(BigInt((50 * 51) / 2)));
    expect(await markers(t)).toBe(0);
    expect((await ingest(t, recs)).json().data).toEqual({ accepted: 0, duplicates: 50 });
    await t.close();
    await s.store.close();
    await s.activity.close();
  });
});

const tag = { classifier_id: "33333333-3333-4333-8333-333333333333", dimension_name: "topic", value: "x" };
