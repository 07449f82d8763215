import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openChdbActivityStore } from "../../src/stores/clickhouse/chdb-store.js";
import { openClickHouseServerStore } from "../../src/stores/clickhouse/server-store.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { StoreUnavailableError } from "../../src/stores/store-errors.js";
import { PendingActivity } from "../../src/domain/ingest/pipeline/pending-activity.js";
import { countPendingRows, parkPending } from "../../src/domain/ingest/repos/pending-repo.js";
import { activityRow } from "../helpers/activity-stores.js";
import { wireGeneration } from "../helpers/wire-generations.js";
import { hashKey } from "../../src/lib/ids.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { chat } from "../helpers/gateway-client.js";
import { freshPostgresDatabase, PG_SKIP_REASON, PG_URL } from "../helpers/stores.js";

/**
 * A shared activity store (ClickHouse, here in process through chDB) that is down does not stop
 * model requests or let them go uncharged (src/domain/ingest/pipeline/pending-activity.ts): the
 * generations are accepted and charged in the record store, parked there, and written to the
 * activity store by a pass once it is back, exactly once, with analytics' cache made stale.
 *
 * "Down" is the activity store's own classified failure (StoreUnavailableError naming the activity
 * store), which the ClickHouse server store raises for a refused or lost connection
 * (test/contract/store-unavailable.test.ts checks that on a closed loopback port); the store
 * behind it is a real in-process ClickHouse.
 */
class Switchable {
  down = false;
  /** Fail the next insert after it has written (a crash between the write and the settle). */
  failAfterNextInsert = false;
  readonly store: ActivityStore;

  constructor(private readonly real: ActivityStore) {
    const refused = () =>
      new StoreUnavailableError(
        "activity store",
        Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8123"), { code: "ECONNREFUSED" }),
      );
    this.store = {
      ...real,
      insert: async (rows, tags) => {
        if (this.down) throw refused();
        await real.insert(rows, tags);
        if (this.failAfterNextInsert) {
          this.failAfterNextInsert = false;
          throw refused();
        }
      },
      query: async (q, opts) => {
        if (this.down) throw refused();
        return real.query(q, opts);
      },
    };
  }
}

const engines: {
  name: string;
  skip: string | null;
  open: () => Promise<{ store: RecordStore; drop(): Promise<void> }>;
}[] = [
  {
    name: "SQLite",
    skip: null,
    open: async () => ({ store: await openSqliteStore(":memory:"), drop: async () => undefined }),
  },
  {
    name: "PostgreSQL",
    skip: PG_URL ? null : PG_SKIP_REASON,
    open: async () => {
      const dbi = await freshPostgresDatabase();
      return { store: await openPostgresStore(dbi.url), drop: () => dbi.drop() };
    },
  },
];

for (const engine of engines) {
  describe.skipIf(engine.skip !== null)(`ClickHouse down, ${engine.name} record store`, () => {
    if (engine.skip) console.warn(engine.skip);
    let record: { store: RecordStore; drop(): Promise<void> };
    let real: ActivityStore;
    let ch: Switchable;
    let t: TestApp;
    let pending: PendingActivity;
    let key: string;

    beforeAll(async () => {
      record = await engine.open();
      real = await openChdbActivityStore();
      ch = new Switchable(real);
      t = await makeTestApp({ store: record.store, activity: ch.store });
      pending = new PendingActivity(record.store, ch.store);
      const created = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "down" } });
      key = created.json<{ key: string }>().key;
    });
    afterAll(async () => {
      await pending?.stop();
      await t?.close();
      await real?.close();
      await record?.store.close();
      await record?.drop();
    });

    const usage = async (): Promise<number> =>
      (await t.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>()
        .data.usage;
    const now = () => t.clock.now().getTime();
    const requests = async () => {
      const iso = (ms: number) => new Date(ms).toISOString();
      return t.call({
        method: "POST",
        url: "/api/v1/analytics/query",
        payload: {
          metrics: ["request_count"],
          time_range: { start: iso(now() - 3_600_000), end: iso(now() + 60_000) },
        },
      });
    };
    const count = async (): Promise<number> => {
      const r = await requests();
      expect(r.statusCode, r.body).toBe(200);
      return Number(
        r.json<{ data: { data: { request_count: number }[] } }>().data.data[0]?.request_count ?? 0,
      );
    };

    it("serves and charges model requests while it is down, and parks their rows", async () => {
      expect(await count()).toBe(0);
      ch.down = true;
      const json = await chat(t, key, { model: "mock/echo", max_tokens: 20 });
      expect(json.status, json.text).toBe(200);
      const stream = await chat(t, key, { model: "mock/echo", max_tokens: 20, stream: true });
      expect(stream.status).toBe(200);
      expect(stream.text).toContain("data: [DONE]");
      const cost = (json.cost ?? 0) + (stream.cost ?? 0);
      expect(cost).toBeGreaterThan(0);
      expect(await usage()).toBeCloseTo(cost, 9);
      expect(await countPendingRows(record.store.db, t.organizationId)).toBe(2);
      const refused = await requests();
      expect(refused.statusCode).toBe(503);
      expect(refused.json().error.message).toBe("The activity store is busy or unreachable; retry shortly");
      // A pass while it is still down fails and keeps everything parked.
      await expect(pending.drain()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await countPendingRows(record.store.db, t.organizationId)).toBe(2);
    });

    it("writes the parked rows once it is back, exactly once, and analytics' cache goes stale", async () => {
      ch.down = false;
      // Read before the pass: the parked rows are not there yet (and this answer is cached).
      expect(await count()).toBe(0);
      // The first write lands, then the pass fails before it forgets the batch (a crash).
      ch.failAfterNextInsert = true;
      await expect(pending.drain()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await countPendingRows(record.store.db, t.organizationId)).toBe(2);
      // The next pass writes what is missing; the store skips what it already holds.
      expect(await pending.drain()).toBe(2);
      expect(await countPendingRows(record.store.db, t.organizationId)).toBe(0);
      expect(await count()).toBe(2);
      expect(await pending.drain()).toBe(0);
      expect(await count()).toBe(2);
    });

    it("accepts POST /activity/generations while it is down, counted once it is back", async () => {
      ch.down = true;
      const id = `gen-down-${engine.name}`;
      const r = await t.call({
        method: "POST",
        url: "/api/v1/activity/generations",
        payload: {
          generations: [
            wireGeneration({
              id,
              created_at: new Date(now() - 1_000).toISOString(),
              api_key_hash: hashKey(key),
            }),
          ],
        },
      });
      expect(r.statusCode, r.body).toBe(200);
      ch.down = false;
      expect(await pending.drain()).toBe(1);
      expect(await count()).toBe(3);
    });
  });
}

/**
 * Several instances write parked batches at once (PostgreSQL): each batch reaches the activity
 * store from one pass only, the others skipping what it holds locked.
 */
describe.skipIf(!PG_URL)("parked batches written by two instances at once", () => {
  it("hands every parked batch to the activity store once", async () => {
    const dbi = await freshPostgresDatabase();
    const one = await openPostgresStore(dbi.url);
    const two = await openPostgresStore(dbi.url);
    const real = await openChdbActivityStore();
    try {
      const orgs = ["org-pending-z", "org-pending-a"];
      for (let i = 0; i < 30; i++) {
        const org = orgs[i % 2]!;
        const rows = [activityRow({ organization_id: org }), activityRow({ organization_id: org })];
        await parkPending(one.db, org, rows, [], Date.now());
      }
      // Slow writes, so that the passes overlap, and no existence check between them to hide a
      // batch handed over twice.
      const handed = new Map<string, number>();
      const slow: ActivityStore = {
        ...real,
        insert: async (rows, tags) => {
          await new Promise((r) => setTimeout(r, 20));
          for (const r of rows) handed.set(r.id, (handed.get(r.id) ?? 0) + 1);
          await real.insert(rows, tags);
        },
      };
      const a = new PendingActivity(one, slow, { pageBatches: 4 });
      const b = new PendingActivity(two, slow, { pageBatches: 4 });
      const [na, nb] = await Promise.all([a.drain(), b.drain()]);
      expect(na).toBeGreaterThan(0);
      expect(nb).toBeGreaterThan(0);
      // A pass skips the batches the other holds: whatever both left, the next passes write.
      await a.drain();
      await b.drain();
      expect(handed.size).toBe(60);
      expect([...handed.values()].every((n) => n === 1)).toBe(true);
      expect(await countPendingRows(one.db, orgs[0]!)).toBe(0);
      expect(await countPendingRows(one.db, orgs[1]!)).toBe(0);
    } finally {
      await real.close();
      await one.close();
      await two.close();
      await dbi.drop();
    }
  });
});

/**
 * A ClickHouse server that stops answering (accepts the connection, never replies) holds a write
 * for its write time limit at most, then fails it as the activity store's unavailability: ingest
 * parks the rows instead of holding the key's ledger rows for the client's 300 s request timeout.
 */
describe("a ClickHouse server that stops answering writes", () => {
  let fake: Server;
  let activity: ActivityStore;
  let t: TestApp;
  const held: ServerResponse[] = [];
  let hangSelects = false;

  beforeAll(async () => {
    // Enough of ClickHouse's HTTP interface: DDL answers 200, an existence check finds nothing,
    // an INSERT is never answered.
    fake = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        if (/query=INSERT/i.test(req.url ?? "")) return void held.push(res);
        if (/^\s*SELECT/i.test(body)) {
          if (hangSelects) return void held.push(res);
          res.setHeader("content-type", "application/json");
          return void res.end(JSON.stringify({ meta: [{ name: "id", type: "String" }], data: [], rows: 0 }));
        }
        res.end("");
      });
    });
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    const port = (fake.address() as AddressInfo).port;
    activity = await openClickHouseServerStore({ url: `http://127.0.0.1:${port}`, writeTimeoutMs: 300 });
    t = await makeTestApp({ activity });
  });
  afterAll(async () => {
    for (const res of held) res.destroy();
    await t?.close();
    await activity?.close();
    fake.closeAllConnections();
    await new Promise<void>((r) => fake.close(() => r()));
  });

  it("fails the write after its time limit, naming the activity store", async () => {
    const t0 = performance.now();
    const failure = await activity.insert([activityRow()], []).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect((failure as StoreUnavailableError).store).toBe("activity store");
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  const ingestOne = (id: string) =>
    t.call({
      method: "POST",
      url: "/api/v1/activity/generations",
      payload: {
        generations: [
          {
            id,
            api_key_hash: hashKey(t.key),
            created_at: new Date(t.clock.now().getTime() - 1_000).toISOString(),
            model: "openai/gpt-4o",
            provider: "OpenAI",
            usage: 0.001,
            tokens_prompt: 10,
            tokens_completion: 5,
            latency_ms: 100,
          },
        ],
      },
    });

  it("an ingest batch meanwhile is accepted and parked", async () => {
    const r = await ingestOne("gen-hung-1");
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ data: { accepted: 1 } });
    expect(await countPendingRows(t.ctx.store.db, t.organizationId)).toBe(1);
  });

  it("so is one whose existence check is never answered (the query's time limit, then parked)", async () => {
    hangSelects = true;
    const r = await ingestOne("gen-hung-2");
    expect(r.statusCode, r.body).toBe(200);
    expect(await countPendingRows(t.ctx.store.db, t.organizationId)).toBe(2);
  });
});
