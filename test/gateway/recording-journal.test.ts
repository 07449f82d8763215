import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { decodeEntry, encodeEntry, RecordingJournal } from "../../src/gateway/recording/journal.js";
import { RECORD_RETRY_MS } from "../../src/gateway/gateway.js";
import type { JournaledGeneration, ServedGeneration } from "../../src/gateway/recording/record-generation.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening } from "../helpers/server.js";
import { failTransactions, gateTransactions, servedGeneration } from "../helpers/recording.js";

/**
 * The recording journal (src/gateway/recording/journal.ts): durable recording on a SQLite file answers once
 * the generation is in the journal, before its commit. A process that stops between the two
 * leaves the journal, and the next app on the same store records it before serving: the key is
 * charged exactly once (also when the first process's commit lands after all), GET /generation
 * finds it, and the journal's files are gone. A crash of the real server is in
 * test/process/gateway-process.test.ts.
 */

/**
 * A directory removed when the test ends, after everything the test opened in it is closed:
 * onTestFinished callbacks run last-registered first, and afterEach runs before any of them (a
 * store closed after its directory was gone made its checkpointer's thread warn that it could not
 * open the file).
 */
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "gatehouse-journal-"));
  onTestFinished(() => rmSync(d, { recursive: true, force: true }));
  return d;
};

/** An app on a SQLite file with this recording mode; both are closed when the test ends. */
async function appOnFile(file: string, recording: "durable" | "deferred" = "durable") {
  const store = await openSqliteStore(file);
  const t = await makeTestApp({ store, clock: systemClock, env: { GATEHOUSE_RECORDING: recording } });
  onTestFinished(async () => {
    await t.close();
    await store.close();
  });
  return { store, t };
}

/** A mock/echo chat completion of `content` (max_tokens 20) through the app with `key`. */
const say = (t: TestApp, key: string, content: string) =>
  chat(t, key, { model: "mock/echo", max_tokens: 20, messages: [{ role: "user", content }] });

/** A new key of the app's default workspace, without a limit. */
const newKey = async (t: TestApp): Promise<string> =>
  (await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "k" } })).json<{ key: string }>().key;

/** SQLite's answer while another connection holds the write lock past the busy timeout. */
const locked = () => Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });

const usageOf = async (t: TestApp, key: string): Promise<number> =>
  (await t.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>().data
    .usage;

describe("recording journal: answered before the commit, recorded by the next start", () => {
  it("a generation answered and never committed is charged once by the next app on the store", async () => {
    const dir = tempDir();
    const file = join(dir, "gatehouse.sqlite");
    const first = await openSqliteStore(file);
    const a = await makeTestApp({
      store: first,
      clock: systemClock,
      env: { GATEHOUSE_RECORDING: "durable" },
    });
    const created = await a.call({ method: "POST", url: "/api/v1/keys", payload: { name: "k", limit: 1 } });
    const key = created.json<{ key: string }>().key;
    expect(a.app.gateway.journal).not.toBeNull();

    // The first process's commits never come: its answers are in the journal only.
    const g = gateTransactions(first);
    onTestFinished(() => g.open());
    const answers = [await say(a, key, "one"), await say(a, key, "two")];
    for (const r of answers) expect(r.status).toBe(200);
    const bodies = answers.map((r) => r.json as { id: string; usage: { cost: number } });
    const charged = bodies.reduce((sum, b) => sum + b.usage.cost, 0);
    expect(charged).toBeGreaterThan(0);
    expect(new Set(a.app.gateway.journal?.held())).toEqual(new Set(bodies.map((b) => b.id)));
    expect(readdirSync(`${file}.journal`).filter((n) => n.endsWith(".journal"))).toHaveLength(1);

    // The next process on the same store: the journal is recorded before anything is served.
    const { t: b } = await appOnFile(file);
    expect(b.app.gateway.journal?.held()).toEqual([]);
    expect(await usageOf(b, key)).toBeCloseTo(charged, 12);
    for (const body of bodies) {
      const r = await b.call({ method: "GET", url: `/api/v1/generation?id=${body.id}`, auth: key });
      expect(r.statusCode).toBe(200);
      expect(r.json<{ data: { usage: number } }>().data.usage).toBeCloseTo(body.usage.cost, 12);
    }
    expect(readdirSync(`${file}.journal`).filter((n) => n.endsWith(".journal"))).toEqual([]);

    // The first process's commits land after all: duplicates by id, never a second charge.
    g.open();
    await a.app.gateway.recorder.settled();
    expect(await usageOf(a, key)).toBeCloseTo(charged, 12);
    await b.app.gateway.recorder.settled();
    expect(await usageOf(b, key)).toBeCloseTo(charged, 12);
    await a.close();
    await first.close();
  });

  it("an answer's hold counts its charge, not its worst case, while its record waits to commit", async () => {
    const { store, t } = await appOnFile(join(tempDir(), "gatehouse.sqlite"));
    const models = (await t.call({ method: "GET", url: "/api/v1/models" })).json<{
      data: { id: string; pricing: { completion: string } }[];
    }>().data;
    const perToken = Number(models.find((m) => m.id === "mock/echo")!.pricing.completion);
    // One worst case (1,000 completion tokens) fits the limit; two do not; one worst case and a
    // short answer's charge do.
    const worst = 1_000 * perToken;
    const created = await t.call({
      method: "POST",
      url: "/api/v1/keys",
      payload: { name: "near its limit", limit: 1.6 * worst },
    });
    const key = created.json<{ key: string }>().key;
    const ask = () =>
      chat(t, key, { model: "mock/echo", max_tokens: 1_000, messages: [{ role: "user", content: "hi" }] });
    // No commit lands until the end: the first answer's record waits, and so does its hold.
    const g = gateTransactions(store);
    onTestFinished(() => g.open());
    const first = await ask();
    expect(first.status).toBe(200);
    const charged = first.cost!;
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThan(0.05 * worst);
    expect(await t.app.gateway.holds.store.openCount()).toBe(1);
    // Counted at its worst case, the open hold would leave 0.6 of one: refused (402).
    const second = await ask();
    expect(second.status).toBe(200);
    const third = await ask();
    expect(third.status).toBe(200);
    expect(await t.app.gateway.holds.store.openCount()).toBe(3);
    g.open();
    const cost = (r: typeof first) => r.cost!;
    expect(await usageOf(t, key)).toBeCloseTo(cost(first) + cost(second) + cost(third), 12);
    expect(await t.app.gateway.holds.store.openCount()).toBe(0);
  });

  it("an app whose journal cannot be recorded (the store down) does not start, closes what it opened, and keeps the journal", async () => {
    const dir = tempDir();
    const file = join(dir, "gatehouse.sqlite");
    const store = await openSqliteStore(file);
    onTestFinished(() => store.close());
    const a = await makeTestApp({ store, clock: systemClock, env: { GATEHOUSE_RECORDING: "durable" } });
    const { key, data } = (
      await a.call({ method: "POST", url: "/api/v1/keys", payload: { name: "k" } })
    ).json<{ key: string; data: { hash: string } }>();
    const ref = { hash: data.hash, organizationId: a.organizationId, workspaceId: a.workspaceId };
    await a.close();
    // What a process killed after answering leaves: one generation journaled, never committed.
    const left = servedGeneration(ref, { costNano: 2_500n });
    const writer = RecordingJournal.open(`${file}.journal`);
    await writer.append(left);
    await writer.close();

    const transaction = store.transaction.bind(store);
    store.transaction = async () => {
      throw new Error("record store down");
    };
    const closed = vi.spyOn(RecordingJournal.prototype, "close");
    onTestFinished(() => closed.mockRestore());
    await expect(
      makeTestApp({ store, clock: systemClock, env: { GATEHOUSE_RECORDING: "durable" } }),
    ).rejects.toThrow("record store down");
    // The gateway the failed start built is closed (its journal with it), nothing recorded.
    expect(closed).toHaveBeenCalledTimes(1);
    expect(readdirSync(`${file}.journal`).filter((n) => n.endsWith(".journal"))).toHaveLength(1);

    // The store back: the next start records the entry, once.
    store.transaction = transaction;
    const b = await makeTestApp({ store, clock: systemClock, env: { GATEHOUSE_RECORDING: "durable" } });
    onTestFinished(() => b.close());
    expect(b.app.gateway.journal?.held()).toEqual([]);
    expect(await usageOf(b, key)).toBeCloseTo(2.5e-6, 12);
  });

  it("a committed answer leaves nothing in the journal, nor a clean stop a file; deferred recording keeps none", async () => {
    const dir = tempDir();
    const file = join(dir, "gatehouse.sqlite");
    const { t } = await appOnFile(file);
    const key = await newKey(t);
    const r = await say(t, key, "hello");
    expect(r.status).toBe(200);
    await t.app.gateway.recorder.settled();
    await new Promise((done) => setImmediate(done));
    expect(t.app.gateway.journal?.held()).toEqual([]);
    // A clean stop leaves no journal file behind (nothing for the next start to read).
    expect(readdirSync(`${file}.journal`)).toHaveLength(1);
    await t.app.close();
    expect(readdirSync(`${file}.journal`)).toEqual([]);

    const { t: d } = await appOnFile(join(dir, "deferred.sqlite"), "deferred");
    expect(d.app.gateway.journal).toBeNull();
    expect(existsSync(join(dir, "deferred.sqlite.journal"))).toBe(false);
  });

  it("a record that fails after its journaled answer (the store busy a moment) is recorded by the retry pass, once, without a restart", async () => {
    const dir = tempDir();
    const { store, t } = await appOnFile(join(dir, "gatehouse.sqlite"));
    const key = await newKey(t);
    const journal = t.app.gateway.journal as RecordingJournal;
    const reported: string[] = [];
    t.app.gateway.recorder.onFailure((_err, id) => reported.push(id));
    // Another process holds the store's write lock past the busy timeout (a CLI import, say).
    const busy = failTransactions(store, locked());
    onTestFinished(() => busy.restore());
    const answers = [await say(t, key, "one"), await say(t, key, "two")];
    for (const r of answers) expect(r.status).toBe(200);
    const ids = answers.map((r) => (r.json as { id: string }).id);
    const charged = answers.reduce((sum, r) => sum + r.cost!, 0);
    await t.app.gateway.recorder.settled();
    await new Promise((done) => setTimeout(done, 20));
    expect(reported.sort()).toEqual([...ids].sort());
    const failed = t.app.gateway.failedRecords;
    const release = (ids: string[]) => journal.release(...ids);
    expect(failed.size).toBe(2);
    expect(new Set(journal.held())).toEqual(new Set(ids));
    // While the store is still busy, a retry fails and keeps them.
    await expect(failed.retry(t.app.gateway.recording, () => undefined, release)).rejects.toThrow(
      "database is locked",
    );
    expect(failed.size).toBe(2);

    // The lock is gone: the next retry records both, releases them, and a later one does nothing.
    busy.restore();
    const refused: string[] = [];
    expect(await failed.retry(t.app.gateway.recording, (_e, id) => refused.push(id), release)).toEqual({
      recorded: 2,
      refused: 0,
    });
    expect(refused).toEqual([]);
    expect(failed.size).toBe(0);
    expect(journal.held()).toEqual([]);
    expect(await usageOf(t, key)).toBeCloseTo(charged, 12);
    for (const id of ids) {
      const r = await t.call({ method: "GET", url: `/api/v1/generation?id=${id}`, auth: key });
      expect(r.statusCode).toBe(200);
    }
    expect(await failed.retry(t.app.gateway.recording, () => undefined, release)).toEqual({
      recorded: 0,
      refused: 0,
    });
    expect(await usageOf(t, key)).toBeCloseTo(charged, 12);
  });

  it("the app's own pass retries failed records every few seconds", async () => {
    const dir = tempDir();
    const { store, t } = await appOnFile(join(dir, "gatehouse.sqlite"));
    const key = await newKey(t);
    const busy = failTransactions(store, locked());
    onTestFinished(() => busy.restore());
    const r = await say(t, key, "later");
    expect(r.status).toBe(200);
    await t.app.gateway.recorder.settled();
    const journal = t.app.gateway.journal as RecordingJournal;
    await vi.waitFor(() => expect(t.app.gateway.failedRecords.size).toBe(1));
    busy.restore();
    await vi.waitFor(() => expect(t.app.gateway.failedRecords.size).toBe(0), {
      timeout: RECORD_RETRY_MS * 3,
      interval: 50,
    });
    expect(await usageOf(t, key)).toBeCloseTo(r.cost!, 12);
    expect(journal.held()).toEqual([]);
  }, 30_000);

  it("when the journal cannot take an answer (disk full), that answer waits for its commit", async () => {
    const dir = tempDir();
    const { store, t } = await appOnFile(join(dir, "gatehouse.sqlite"));
    const key = await newKey(t);
    const journal = t.app.gateway.journal as RecordingJournal;
    const append = vi
      .spyOn(journal, "append")
      .mockRejectedValueOnce(new Error("ENOSPC: no space left on device"));
    onTestFinished(() => append.mockRestore());
    const reported: string[] = [];
    t.app.gateway.recorder.onFailure((_err, id) => reported.push(id));
    const g = gateTransactions(store);
    onTestFinished(() => g.open());
    const answer = say(t, key, "no room");
    const first = await Promise.race([answer, new Promise((done) => setTimeout(() => done("pending"), 500))]);
    expect(first).toBe("pending"); // neither journaled nor committed: no answer yet
    g.open();
    const r = await answer;
    expect(r.status).toBe(200);
    expect(await usageOf(t, key)).toBeCloseTo(r.cost!, 12);
    expect(journal.held()).toEqual([]);
    expect(reported).toEqual([]);
  });

  it("disk full: a commit that fails before the journal's append has failed is the request's error, not an unhandled rejection", async () => {
    const dir = tempDir();
    const store = await openSqliteStore(join(dir, "gatehouse.sqlite"));
    // No gathering: the record's flush starts at once.
    const t = await makeTestApp({
      store,
      clock: systemClock,
      env: { GATEHOUSE_RECORDING: "durable", GATEHOUSE_RECORDING_GATHER_MS: "0" },
    });
    onTestFinished(async () => {
      await t.close();
      await store.close();
    });
    const key = await newKey(t);
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on("unhandledRejection", onUnhandled);
    onTestFinished(() => void process.off("unhandledRejection", onUnhandled));
    const journal = t.app.gateway.journal as RecordingJournal;
    const append = vi
      .spyOn(journal, "append")
      // A slow disk: the write (on the thread pool when the turn's appends are large, or queued
      // behind the previous one) fails after the record's commit has.
      .mockImplementationOnce(
        () =>
          new Promise((_, fail) => setTimeout(() => fail(new Error("ENOSPC: no space left on device")), 30)),
      );
    onTestFinished(() => append.mockRestore());
    const transaction = store.transaction.bind(store);
    store.transaction = () => Promise.reject(new Error("SQLITE_FULL: database or disk is full"));
    onTestFinished(() => void (store.transaction = transaction));
    const r = await say(t, key, "no room anywhere");
    store.transaction = transaction;
    await new Promise((done) => setTimeout(done, 20));
    expect(unhandled).toEqual([]);
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect(await t.app.gateway.holds.store.openCount()).toBeLessThanOrEqual(1);
    expect(await usageOf(t, key)).toBe(0);
  });

  it("a journaled stream's events leave with its usage chunk and [DONE] in one write, after the journal's", async () => {
    // The journal writes at the end of the turn's I/O; without the sink waiting for it
    // (stream.ts `settling`), the events and the usage chunk left in a write of their own,
    // before the journal's, and [DONE] in a second.
    const store = await openSqliteStore(join(tempDir(), "gatehouse.sqlite"));
    const s = await startListening({ store, clock: systemClock, env: { GATEHOUSE_RECORDING: "durable" } });
    onTestFinished(async () => {
      await s.close();
      await store.close();
    });
    expect(s.app.gateway.journal).not.toBeNull();
    const key = (
      await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "stream", limit: 1 } })
    ).json<{ key: string }>().key;
    // What the server's responses write before their end (the end's own text is not a write).
    const writes: string[] = [];
    const original = ServerResponse.prototype.write as (this: ServerResponse, ...args: unknown[]) => boolean;
    vi.spyOn(ServerResponse.prototype, "write").mockImplementation(function (this: ServerResponse, ...args) {
      if (typeof args[0] === "string") writes.push(args[0]);
      return original.apply(this, args);
    });
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const stream = async () => {
      const res = await fetch(`${s.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "mock/echo",
          stream: true,
          messages: [{ role: "user", content: "hi" }],
        }),
      });
      return res.text();
    };
    // The first append opens the journal's segment file, which takes longer than a turn: the
    // events leave at the end of the turn anyway, before the end.
    await stream();
    writes.length = 0;
    const body = await stream();
    expect(body).toContain('"choices":[],"usage":');
    expect(body.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(writes.some((w) => w.includes("chat.completion.chunk"))).toBe(false);
  });

  it("replay records the good entries, drops what ingest refuses or cannot read, and keeps all when the store is down", async () => {
    const dir = tempDir();
    const { store, t } = await appOnFile(join(dir, "gatehouse.sqlite"));
    const created = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "k" } });
    const { key, data } = created.json<{ key: string; data: { hash: string } }>();
    const served = (over: Partial<ServedGeneration> = {}): JournaledGeneration =>
      servedGeneration(
        { hash: data.hash, organizationId: t.organizationId, workspaceId: t.workspaceId },
        {
          costNano: 1_500n,
          externalUser: "user-1",
          attempts: [{ provider: "mock", model: "mock/echo", status: 200, durationMs: 3, byok: false }],
          input: [{ role: "user", content: "secret prompt" }],
          output: "secret completion",
          params: { temperature: 0.5 },
          ...over,
        },
      );

    // What reaches the disk: the record's fields, no prompt, completion or parameters.
    const good = served();
    const encoded = encodeEntry(good);
    expect(encoded).not.toContain("secret");
    expect(decodeEntry(encoded)).toEqual({ ...good, input: [], output: null, params: null });
    expect(decodeEntry("{not json")).toBeNull();
    expect(decodeEntry("null")).toBeNull(); // valid JSON, not an entry
    expect(decodeEntry(JSON.stringify({ id: "x" }))).toBeNull();

    const journalDir = join(dir, "journal");
    const writer = RecordingJournal.open(journalDir);
    const refusedOne = served({ promptTokens: -1 });
    await writer.append(good);
    await writer.append(refusedOne);
    await writer.close();

    // The store down: replay throws and keeps every entry.
    const down = RecordingJournal.open(journalDir);
    const transaction = store.transaction.bind(store);
    store.transaction = async () => {
      throw new Error("record store down");
    };
    await expect(down.replay(t.app.gateway.recording, () => undefined)).rejects.toThrow("record store down");
    store.transaction = transaction;
    expect(new Set(down.held())).toEqual(new Set([good.id, refusedOne.id]));
    await down.close();

    // The store back: the good entry is recorded, the refused one reported and dropped.
    const reader = RecordingJournal.open(journalDir);
    const refused: string[] = [];
    const result = await reader.replay(t.app.gateway.recording, (_err, id) => refused.push(id));
    expect(result).toEqual({ recorded: 1, refused: 1 });
    expect(refused).toEqual([refusedOne.id]);
    expect(reader.held()).toEqual([]);
    expect(reader.files()).toEqual([]);
    await reader.close();
    expect(await usageOf(t, key)).toBeCloseTo(1.5e-6, 12);
  });
});
