import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { drainIngestBuffer, startIngestBuffer } from "../../src/domain/ingest/pipeline/ingest-buffer.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { nanoToUsd } from "../../src/lib/money.js";
import type { ActivityStore, ExclusiveActivityWriter } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { ingest, wireRecord } from "./ingest-helpers.js";

/**
 * The embedded store's ingest path accepts batches into a buffer in the record store and writes
 * them to DuckDB afterwards, without checking for ids already present (ingest-buffer.ts). These
 * tests leave behind exactly what a crash or a failure leaves at each step, restart, and retry: every id ends up once in the activity
 * store and once in the ledger.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Stores {
  store: RecordStore;
  activity: ActivityStore;
}

/** A data directory of the test's own, removed after the file. */
function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "gh-ingest-recovery-"));
  dirs.push(dir);
  return dir;
}

/** Stops a "process": its app, then its stores. */
async function stop(s: Stores, t: TestApp): Promise<void> {
  await t.close();
  await s.store.close();
  await s.activity.close();
}

/** Makes the flusher's writes fail (the engine refuses), so accepted batches stay buffered; returns the undo. */
function failActivityWrites(s: Stores): () => void {
  const writer = s.activity.exclusive as ExclusiveActivityWriter;
  const apply = writer.apply;
  writer.apply = async () => {
    throw new Error("simulated activity store failure");
  };
  return () => {
    writer.apply = apply;
  };
}

async function openStores(dir: string): Promise<Stores> {
  return {
    store: await openSqliteStore(join(dir, "gatehouse.sqlite")),
    activity: await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") }),
  };
}

/** The next start on `dir`: its stores, its app, and the buffer recovered (startIngestBuffer). */
async function restart(dir: string): Promise<{ s: Stores; t: TestApp; writer: ExclusiveActivityWriter }> {
  const s = await openStores(dir);
  const t = await makeTestApp(s);
  const writer = s.activity.exclusive as ExclusiveActivityWriter;
  await startIngestBuffer(s.store, writer);
  return { s, t, writer };
}

/** Rows of a query over one organization's generations in the activity store. */
function activityRows(s: Stores, sql: string, org: string) {
  return s.activity.query({ sql, params: { org } }, { timeoutMs: 10_000 });
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

const buffered = async (t: TestApp) =>
  (await t.ctx.store.db.selectFrom("ingest_buffer").select("seq").execute()).length;

describe("ingest recovery on the embedded store (SQLite + DuckDB files)", () => {
  it("a record-store commit that fails leaves nothing behind; the retry counts each record once", async () => {
    const dir = newDir();
    const s = await openStores(dir);
    const t = await makeTestApp(s);
    const recs = Array.from({ length: 50 }, (_, i) => wireRecord(t, { id: `f-${i}`, usage: (i + 1) / 1e9 }));
    const ids = recs.map((r) => r.id as string);
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
    expect(await counts(t, ids)).toEqual({});
    expect(await usageOf(t)).toBe(0);
    expect(await buffered(t)).toBe(0);

    expect((await ingest(t, recs)).json().data).toEqual({ accepted: 50, duplicates: 0 });
    const n = await counts(t, ids);
    expect(Object.values(n).every((x) => x === 1) && Object.keys(n).length === 50).toBe(true);
    expect(await usageOf(t)).toBe(nanoToUsd(BigInt((50 * 51) / 2)));
    expect((await ingest(t, recs)).json().data).toEqual({ accepted: 0, duplicates: 50 });
    expect(await buffered(t)).toBe(0);
    await stop(s, t);
  });

  it("a batch accepted but not yet written when the process stops is written by the next start, once", async () => {
    const dir = newDir();
    let s = await openStores(dir);
    let t = await makeTestApp(s);
    // The flusher's writes fail (the engine refuses): the batch stays in the buffer, accepted.
    const restore = failActivityWrites(s);
    const recs = Array.from({ length: 20 }, (_, i) => wireRecord(t, { id: `p-${i}`, usage: 0.001 }));
    expect((await ingest(t, recs)).json().data).toEqual({ accepted: 20, duplicates: 0 });
    expect(await usageOf(t)).toBe(0.02);
    expect(await buffered(t)).toBe(1);
    // A read waits for the batches accepted before it: with the store failing, it fails too
    // rather than answering without them.
    await expect(counts(t, ["p-0"])).rejects.toThrow(/simulated/);
    restore();
    const org = t.organizationId;
    await stop(s, t);

    ({ s, t } = await restart(dir));
    expect(await buffered(t)).toBe(0);
    const rows = await activityRows(
      s,
      "SELECT count(*) AS n, count(DISTINCT id) AS d FROM generations WHERE organization_id = $org",
      org,
    );
    expect(rows[0]).toEqual({ n: 20n, d: 20n });
    expect(await (s.activity.exclusive as ExclusiveActivityWriter).applied()).toEqual([]);
    await stop(s, t);
  });

  it("a batch that repeats ids accepted before logs only its new records: after a restart each id is written once", async () => {
    const dir = newDir();
    let s = await openStores(dir);
    let t = await makeTestApp(s);
    const restore = failActivityWrites(s);
    const rec = (id: string) => wireRecord(t, { id, usage: 0.001 });
    const first = ["r-0", "r-1", "r-2", "r-3", "r-4"];
    expect((await ingest(t, first.map(rec))).json().data).toEqual({ accepted: 5, duplicates: 0 });
    const overlap = ["r-3", "r-4", "n-0", "n-1", "n-2"];
    expect((await ingest(t, overlap.map(rec))).json().data).toEqual({ accepted: 3, duplicates: 2 });
    expect((await ingest(t, first.map(rec))).json().data).toEqual({ accepted: 0, duplicates: 5 });
    expect(await buffered(t)).toBe(2);
    expect(await usageOf(t)).toBe(0.008);
    restore();
    const org = t.organizationId;
    await stop(s, t);

    ({ s, t } = await restart(dir));
    expect(await buffered(t)).toBe(0);
    const rows = await activityRows(
      s,
      "SELECT id, count(*) AS n FROM generations WHERE organization_id = $org GROUP BY id ORDER BY id",
      org,
    );
    const ids = ["n-0", "n-1", "n-2", ...first];
    expect(rows).toEqual(ids.map((id) => ({ id, n: 1n })));
    await stop(s, t);
  });

  it("refuses to start without the ingest log of batches it accepted, naming it (the log must be kept with the DuckDB file)", async () => {
    const dir = newDir();
    let s = await openStores(dir);
    let t = await makeTestApp(s);
    failActivityWrites(s);
    expect((await ingest(t, [wireRecord(t, { id: "kept-1" })])).json().data.accepted).toBe(1);
    await stop(s, t);
    expect(readdirSync(join(dir, "activity.duckdb.ingest-log")).length).toBeGreaterThan(0);
    rmSync(join(dir, "activity.duckdb.ingest-log"), { recursive: true });

    s = await openStores(dir);
    t = await makeTestApp(s);
    await expect(startIngestBuffer(s.store, s.activity.exclusive as ExclusiveActivityWriter)).rejects.toThrow(
      /1 accepted batch\(es\) are missing from the ingest log .*activity\.duckdb\.ingest-log/,
    );
    expect(await buffered(t)).toBe(1); // nothing dropped silently
    await stop(s, t);
  });

  it("a failure after the activity commit and before the buffer row's deletion: the batch is not written again, in process or after a restart", async () => {
    const dir = newDir();
    let s = await openStores(dir);
    let t = await makeTestApp(s);
    let writer = s.activity.exclusive as ExclusiveActivityWriter;
    const apply = writer.apply;
    const failAfterCommit = () => {
      writer.apply = async (batches, seqs) => {
        await apply.call(writer, batches, seqs);
        throw new Error("simulated crash after the activity commit");
      };
    };
    const cIds = (prefix: string) => Array.from({ length: 5 }, (_, i) => `${prefix}-${i}`);
    const idsOf = async (prefix: string) =>
      (
        await s.activity.query(
          { sql: `SELECT id FROM generations WHERE id LIKE '${prefix}-%' ORDER BY id`, params: {} },
          { timeoutMs: 10_000 },
        )
      ).map((r) => r.id);

    // In process: the next flush recovers first instead of applying the batch again.
    failAfterCommit();
    expect(
      (
        await ingest(
          t,
          cIds("c").map((id) => wireRecord(t, { id })),
        )
      ).json().data,
    ).toEqual({
      accepted: 5,
      duplicates: 0,
    });
    await expect(drainIngestBuffer(s.store, writer)).rejects.toThrow(/simulated crash/);
    expect(await buffered(t)).toBe(1);
    writer.apply = apply;
    expect(await idsOf("c")).toEqual(cIds("c"));
    expect(await buffered(t)).toBe(0);
    expect(await writer.applied()).toEqual([]);

    // Across a restart: the same state, then a new process.
    failAfterCommit();
    expect(
      (
        await ingest(
          t,
          cIds("d").map((id) => wireRecord(t, { id })),
        )
      ).json().data.accepted,
    ).toBe(5);
    await expect(drainIngestBuffer(s.store, writer)).rejects.toThrow(/simulated crash/);
    writer.apply = apply;
    await stop(s, t);
    ({ s, t, writer } = await restart(dir));
    expect(await buffered(t)).toBe(0);
    expect(await writer.applied()).toEqual([]);
    expect(await idsOf("d")).toEqual(cIds("d"));
    expect(await idsOf("c")).toEqual(cIds("c"));
    await stop(s, t);
  });

  it("a failure after the buffer row's deletion leaves a number remembered; it is forgotten, and new batches are written", async () => {
    const dir = newDir();
    const s = await openStores(dir);
    const t = await makeTestApp(s);
    const writer = s.activity.exclusive as ExclusiveActivityWriter;
    const forget = writer.forget;
    writer.forget = async () => {
      throw new Error("simulated failure before forgetting");
    };
    expect((await ingest(t, [wireRecord(t, { id: "e-1" })])).json().data.accepted).toBe(1);
    await expect(drainIngestBuffer(s.store, writer)).rejects.toThrow(/simulated failure/);
    expect(await buffered(t)).toBe(0);
    expect(await writer.applied()).toHaveLength(1);
    writer.forget = forget;
    expect((await ingest(t, [wireRecord(t, { id: "e-2" })])).json().data.accepted).toBe(1);
    await drainIngestBuffer(s.store, writer);
    expect(await writer.applied()).toEqual([]);
    expect(await counts(t, ["e-1", "e-2"])).toEqual({ "e-1": 1, "e-2": 1 });
    await stop(s, t);
  });

  it("a read under sustained ingest waits for the batches accepted before it, not for the flusher to run dry", async () => {
    const s = await openStores(newDir());
    const t = await makeTestApp(s);
    const writer = s.activity.exclusive as ExclusiveActivityWriter;
    // Each activity transaction of the flusher waits for the test to let it go.
    const apply = writer.apply;
    const gates: (() => void)[] = [];
    let applied = 0;
    writer.apply = async (batches, seqs) => {
      await new Promise<void>((go) => gates.push(go));
      await apply.call(writer, batches, seqs);
      applied += 1;
    };
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 500 && !cond(); i++) await new Promise((done) => setTimeout(done, 10));
      expect(cond()).toBe(true);
    };
    const batch = (prefix: string) =>
      Array.from({ length: 5 }, (_, i) => wireRecord(t, { id: `${prefix}-${i}` }));

    expect((await ingest(t, batch("s1"))).json().data.accepted).toBe(5);
    await until(() => gates.length === 1); // the flusher holds s1
    let answered: Record<string, number> | null = null;
    const read = counts(t, ["s1-0", "s2-0"]).then((c) => (answered = c));
    expect((await ingest(t, batch("s2"))).json().data.accepted).toBe(5); // accepted after the read
    gates.shift()!(); // s1 is written; the flusher goes on to s2 and waits again
    await until(() => gates.length === 1 && applied === 1);
    await read;
    expect(answered).toEqual({ "s1-0": 1 }); // answered while s2 is still waiting
    expect(await buffered(t)).toBe(1);

    gates.shift()!();
    writer.apply = apply;
    expect(await counts(t, ["s1-0", "s2-0"])).toEqual({ "s1-0": 1, "s2-0": 1 });
    await stop(s, t);
  });

  it("a read of one organization waits for that organization's accepted batches only", async () => {
    const s = await openStores(newDir());
    const t = await makeTestApp(s);
    const other = await createOrganization(s.store, t.clock, "Other");
    const writer = s.activity.exclusive as ExclusiveActivityWriter;
    const apply = writer.apply;
    let letGo = (): void => undefined;
    const gate = new Promise<void>((go) => (letGo = go));
    writer.apply = async (batches, seqs) => {
      await gate;
      return apply.call(writer, batches, seqs);
    };
    const rowsOf = (organizationId: string | undefined) =>
      s.activity.query(
        { sql: "SELECT count(*) AS n FROM generations WHERE id LIKE 'org-a-%'", params: {} },
        { timeoutMs: 10_000, ...(organizationId ? { organizationId } : {}) },
      );
    const settled = (p: Promise<unknown>) => {
      let done = false;
      void p.then(() => (done = true));
      return () => done;
    };

    // The test organization's batch is accepted, and held on its way to DuckDB.
    const recs = Array.from({ length: 5 }, (_, i) => wireRecord(t, { id: `org-a-${i}` }));
    expect((await ingest(t, recs)).json().data.accepted).toBe(5);
    // The other organization reads at once, through the store and through the API.
    expect(await rowsOf(other.organizationId)).toEqual([{ n: 0n }]);
    const query = { metrics: ["request_count"], dimensions: [], granularity: "day" };
    const otherAnswer = await t.call({
      method: "POST",
      url: "/api/v1/analytics/query",
      payload: query,
      auth: other.managementKey,
    });
    expect(otherAnswer.statusCode).toBe(200);
    // The test organization's reads, and reads of no one organization, wait for the batch.
    const mine = rowsOf(t.organizationId);
    const everyone = rowsOf(undefined);
    const mineDone = settled(mine);
    const everyoneDone = settled(everyone);
    await new Promise((done) => setTimeout(done, 200));
    expect([mineDone(), everyoneDone()]).toEqual([false, false]);
    letGo();
    expect(await mine).toEqual([{ n: 5n }]);
    expect(await everyone).toEqual([{ n: 5n }]);
    writer.apply = apply;
    await stop(s, t);
  });

  it("backpressure: past maxPendingRows waiting rows a new batch waits for the flusher, then is accepted; nothing is lost", async () => {
    const s = await openStores(newDir());
    const t = await makeTestApp(s);
    const writer = s.activity.exclusive as ExclusiveActivityWriter;
    await startIngestBuffer(s.store, writer, { maxPendingRows: 30 });
    // The flusher's first write hangs until the test lets it go.
    const apply = writer.apply;
    let letGo = (): void => undefined;
    const gate = new Promise<void>((done) => (letGo = done));
    writer.apply = async (batches, seqs) => {
      await gate;
      return apply.call(writer, batches, seqs);
    };
    const batch = (prefix: string) =>
      Array.from({ length: 20 }, (_, i) => wireRecord(t, { id: `${prefix}-${i}`, usage: 0.001 }));

    expect((await ingest(t, batch("bp1"))).json().data.accepted).toBe(20); // 20 waiting
    expect((await ingest(t, batch("bp2"))).json().data.accepted).toBe(20); // 40 waiting > 30
    let third: number | null = null;
    const pending = ingest(t, batch("bp3")).then((r) => (third = r.json().data.accepted as number));
    await new Promise((done) => setTimeout(done, 300));
    expect(third).toBeNull(); // waits: not accepted, not counted, not buffered
    expect(await buffered(t)).toBe(2);
    expect(await usageOf(t)).toBe(0.04);

    letGo();
    await pending;
    expect(third).toBe(20);
    writer.apply = apply;
    const ids = ["bp1", "bp2", "bp3"].flatMap((p) => Array.from({ length: 20 }, (_, i) => `${p}-${i}`));
    const seen = await counts(t, ids);
    expect(Object.keys(seen)).toHaveLength(60);
    expect(Object.values(seen).every((n) => n === 1)).toBe(true);
    expect(await usageOf(t)).toBe(0.06);
    await stop(s, t);
  });
  it("flushLingerMs: batches gather into one activity transaction; a read does not wait for the linger; what is left is written when it ends", async () => {
    const s = await openStores(newDir());
    const t = await makeTestApp(s);
    const writer = s.activity.exclusive as ExclusiveActivityWriter;
    // Long enough that a loaded machine cannot end it between the steps below by accident.
    const LINGER = 2_000;
    await startIngestBuffer(s.store, writer, { flushLingerMs: LINGER });
    const apply = writer.apply;
    const applied: number[] = [];
    writer.apply = async (batches, seqs) => {
      applied.push(seqs.length);
      return apply.call(writer, batches, seqs);
    };
    const batch = (prefix: string) =>
      Array.from({ length: 3 }, (_, i) => wireRecord(t, { id: `${prefix}-${i}`, usage: 0.001 }));
    const t0 = Date.now();
    for (const p of ["lg1", "lg2", "lg3"]) expect((await ingest(t, batch(p))).json().data.accepted).toBe(3);
    expect(Date.now() - t0).toBeLessThan(LINGER); // else the linger ended between batches: no evidence
    expect(applied).toEqual([]); // lingering: nothing written to DuckDB yet
    expect(await buffered(t)).toBe(3);
    // A read writes what it needs at once: all three batches, in one transaction.
    const ids = ["lg1", "lg2", "lg3"].flatMap((p) => Array.from({ length: 3 }, (_, i) => `${p}-${i}`));
    const r0 = Date.now();
    expect(Object.keys(await counts(t, ids))).toHaveLength(9);
    expect(Date.now() - r0).toBeLessThan(LINGER / 2); // it did not wait for the linger
    expect(applied).toEqual([3]);

    // Without a read, the linger's end writes what gathered, again in one transaction.
    for (const p of ["lg4", "lg5"]) await ingest(t, batch(p));
    expect(applied).toEqual([3]);
    await new Promise((done) => setTimeout(done, LINGER + 600));
    expect(applied).toEqual([3, 2]);
    expect(await buffered(t)).toBe(0);
    writer.apply = apply;
    await stop(s, t);
  });
});
