import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { postChat } from "../helpers/gateway-client.js";
import { failTransactions, gateTransactions } from "../helpers/recording.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * When an answer is sent relative to its generation record (docs/gateway.md "Recording"), proven
 * with the record store's transactions held at a gate:
 * - deferred, and durable on a store this process owns (SQLite: the recording journal), answer
 *   while the record cannot commit; the hold keeps counting until it does (no request slips
 *   through meanwhile); a read on the instance waits for the record, then includes it;
 * - durable on a store without a journal (PostgreSQL's path: the store offers no `journalDir`)
 *   waits for the commit.
 */

/** POST /chat/completions to the mock with `key` (max_tokens and content as given); the unread response. */
const mockChat = (
  s: ListeningApp,
  key: string,
  { content, ...body }: { stream?: boolean; max_tokens: number; content: string },
) => postChat(s, key, { model: "mock/echo", ...body, messages: [{ role: "user", content }] });

const settle = (ms: number) => new Promise<"pending">((done) => setTimeout(() => done("pending"), ms));

const MODES = [
  { name: "deferred", env: "deferred", journal: true, beforeCommit: true },
  { name: "durable, journaled", env: "durable", journal: true, beforeCommit: true },
  { name: "durable on a store without a journal", env: "durable", journal: false, beforeCommit: false },
] as const;

/** The in-memory store, seen as a store other processes share (no journal offered). */
async function sharedLikeStore(): Promise<RecordStore> {
  const { journalDir: _none, ...store } = await openSqliteStore(":memory:");
  return store;
}

for (const mode of MODES) {
  describe(`recording: ${mode.name}`, () => {
    let s: ListeningApp;
    let key: string;
    let store: RecordStore | undefined;
    beforeAll(async () => {
      store = mode.journal ? undefined : await sharedLikeStore();
      s = await startListening({
        clock: systemClock,
        env: { GATEHOUSE_RECORDING: mode.env },
        ...(store ? { store } : {}),
      });
      expect(s.app.gateway.journal !== null).toBe(mode.env === "durable" && mode.journal);
      // $0.003 covers one worst case of max_tokens 1000 at the mock's $0.000002 per token, not two.
      const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "k", limit: 0.003 } });
      key = r.json<{ key: string }>().key;
    });
    afterAll(async () => {
      await s.close();
      await store?.close();
    });

    const chat = (stream: boolean) => mockChat(s, key, { stream, max_tokens: 1000, content: "Hello" });
    const keyRead = () =>
      s
        .call({ method: "GET", url: "/api/v1/key", auth: key })
        .then((r) => r.json<{ data: { usage: number } }>());

    it(
      mode.beforeCommit
        ? "answers before the record commits; the hold counts until it does; a read waits for it, then includes it"
        : "the answer waits for the record's commit",
      async () => {
        const g = gateTransactions(s.ctx.store);
        // Whatever fails below, the gate opens, so that the server can still close.
        onTestFinished(() => g.open());
        const answer = chat(false).then(async (r) => ({ status: r.status, body: (await r.json()) as never }));
        // Waiting for the commit: still waiting after 500 ms (the commit cannot happen). Otherwise
        // the answer comes while the gate is closed (10 s only bounds a broken build on a loaded machine).
        const first = await Promise.race([answer, settle(mode.beforeCommit ? 10_000 : 500)]);
        if (!mode.beforeCommit) {
          expect(first).toBe("pending");
          g.open();
          expect((await answer).status).toBe(200);
          return;
        }
        expect(first).not.toBe("pending");
        const { status, body } = first as { status: number; body: { id: string; usage: { cost: number } } };
        expect(status).toBe(200);
        expect(s.app.gateway.holds.liveCount).toBe(1); // the record is not stored: the hold stands
        // Journaled: the answered generation is in the journal until its commit.
        if (s.app.gateway.journal) expect(s.app.gateway.journal.held()).toEqual([body.id]);

        // The standing hold counts the answer's charge now, no longer its worst case: a second
        // worst case fits beside it (it did not when the hold kept its worst case to the commit).
        const second = await chat(false);
        expect(second.status).toBe(200);
        const secondCost = ((await second.json()) as { usage: { cost: number } }).usage.cost;
        expect(s.app.gateway.holds.liveCount).toBe(2); // neither record is stored: both holds stand

        // A read on this instance waits for the record; a health check does not.
        const read = keyRead();
        expect(await Promise.race([read, settle(300)])).toBe("pending");
        expect((await fetch(`${s.baseUrl.replace(/\/api\/v1$/, "")}/healthz`)).status).toBe(200);
        g.open();
        expect((await read).data.usage).toBeCloseTo(body.usage.cost + secondCost, 12);
        const gen = await s.call({ method: "GET", url: `/api/v1/generation?id=${body.id}`, auth: key });
        expect(gen.statusCode).toBe(200);
        expect(s.app.gateway.holds.liveCount).toBe(0);
        // Committed: released from the journal.
        await new Promise((done) => setImmediate(done));
        if (s.app.gateway.journal) expect(s.app.gateway.journal.held()).toEqual([]);

        // The hold is gone once recorded: the next worst case fits again (streamed, this time).
        const third = await chat(true);
        expect(third.status).toBe(200);
        const text = await third.text();
        expect(text).toContain("data: [DONE]");
        // The stream's record is read back too (the read waits for it if it is still pending).
        const after = await keyRead();
        expect(after.data.usage).toBeGreaterThan(body.usage.cost);
      },
    );

    // Answers before the commit only (an answer after it would carry the failure itself).
    if (mode.beforeCommit)
      it("a record that fails after its answer was sent is reported with its generation id, and recorded by the retry once the store answers", async () => {
        const reported: string[] = [];
        s.app.gateway.recorder.onFailure((_err, id) => reported.push(id));
        const down = failTransactions(s.ctx.store, new Error("record store down"));
        onTestFinished(() => down.restore());
        const r = await mockChat(s, key, { max_tokens: 5, content: "Hi" });
        expect(r.status).toBe(200); // answered: the failure comes after
        const { id } = (await r.json()) as { id: string };
        await s.app.gateway.recorder.settled();
        await new Promise((done) => setImmediate(done)); // the settle's rejection handler runs
        expect(reported).toEqual([id]);
        // Kept for the retry pass; journaled, also for the next start.
        const { failedRecords, journal, recording } = s.app.gateway;
        expect(failedRecords.size).toBe(1);
        if (journal) expect(journal.held()).toEqual([id]);
        // The store answers again: the retry records it (the app's own pass may get there first),
        // and a journaled entry is released.
        down.restore();
        await failedRecords.retry(
          recording,
          () => undefined,
          (ids) => journal?.release(...ids),
        );
        await vi.waitFor(async () => {
          const g = await s.call({ method: "GET", url: `/api/v1/generation?id=${id}`, auth: key });
          expect(g.statusCode).toBe(200);
        });
        expect(failedRecords.size).toBe(0);
        if (journal) expect(journal.held()).toEqual([]);
      });
  });
}

describe("GATEHOUSE_RECORDING=deferred with a backlog (GATEHOUSE_RECORDING_MAX_QUEUED)", () => {
  let s: ListeningApp;
  let key: string;
  beforeAll(async () => {
    s = await startListening({
      clock: systemClock,
      env: {
        GATEHOUSE_RECORDING: "deferred",
        GATEHOUSE_RECORDING_GATHER_MS: "0",
        GATEHOUSE_RECORDING_MAX_QUEUED: "2",
      },
    });
    const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "k", limit: 10 } });
    key = r.json<{ key: string }>().key;
  });
  afterAll(() => s.close());

  const chat = () =>
    mockChat(s, key, { max_tokens: 5, content: "Hi" }).then(async (r) => ({
      status: r.status,
      body: await r.text(),
    }));

  it("answers wait for their record once that many records are queued, and go on when the store catches up", async () => {
    const g = gateTransactions(s.ctx.store);
    onTestFinished(() => g.open());
    // The first record is taken by a flush (blocked at the gate); the next two queue behind it.
    for (let i = 0; i < 3; i++) {
      const answered = await Promise.race([chat(), settle(10_000)]);
      expect(answered, `answer ${i + 1}`).not.toBe("pending");
    }
    expect(s.app.gateway.recorder.queued).toBe(2);
    // Two queued: the next answer follows its own record's commit.
    const fourth = chat();
    expect(await Promise.race([fourth, settle(500)])).toBe("pending");
    g.open();
    expect((await fourth).status).toBe(200);
    expect(s.app.gateway.recorder.queued).toBe(0);
    const usage = await s.call({ method: "GET", url: "/api/v1/key", auth: key });
    expect(usage.json<{ data: { usage: number } }>().data.usage).toBeGreaterThan(0);
  });
});
