import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import {
  isConnectionFailure,
  isUniqueViolation,
  StoreUnavailableError,
  unavailableStore,
} from "../../src/stores/store-errors.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import {
  CLICKHOUSE_NOT_NOW_CODES,
  openClickHouseServerStore,
} from "../../src/stores/clickhouse/server-store.js";
import { countPendingRows } from "../../src/domain/ingest/repos/pending-repo.js";
import { hashKey } from "../../src/lib/ids.js";
import { activityRow } from "../helpers/activity-stores.js";
import { wireGeneration } from "../helpers/wire-generations.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { freshPostgresDatabase, PG_URL } from "../helpers/stores.js";
import { startTcpRelay, type TcpRelay } from "../helpers/tcp-relay.js";

describe("store failures told apart (src/stores/store-errors.ts)", () => {
  it("the record store's momentary unavailability, by SQLSTATE class or SQLite code", () => {
    for (const code of ["53300", "53100", "08006", "08001", "57P03", "57P01", "40001", "40P01", "55P03"]) {
      expect(unavailableStore({ code }), code).toBe("record store");
    }
    for (const code of ["SQLITE_BUSY", "SQLITE_LOCKED"]) {
      expect(unavailableStore({ code }), code).toBe("record store");
    }
    // A broken rule in the data, a syntax error, a plain bug: not the store's unavailability.
    for (const err of [
      { code: "23505" },
      { code: "42601" },
      { code: "SQLITE_CONSTRAINT_UNIQUE" },
      { code: "0800" },
      new Error("x"),
      null,
    ]) {
      expect(unavailableStore(err)).toBe(null);
    }
    expect(isUniqueViolation({ code: "23505" })).toBe(true);
    expect(isUniqueViolation({ code: "53300" })).toBe(false);
  });

  it("a socket's failure is a store's only where that store's boundary wrapped it, naming the store", () => {
    // Any outbound connection can raise these: reaching the API bare, they are a 500, not a 503
    // that would blame a store.
    for (const code of ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE"]) {
      expect(unavailableStore({ code }), code).toBe(null);
      expect(isConnectionFailure({ code }), code).toBe(true);
    }
    expect(unavailableStore(new Error("Connection terminated unexpectedly"))).toBe(null);
    // node-postgres's connection lost mid-query: no code, a fixed message.
    expect(isConnectionFailure(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isConnectionFailure({ code: "53300" })).toBe(false);
    expect(isConnectionFailure(new Error("x"))).toBe(false);
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(unavailableStore(new StoreUnavailableError("record store", refused))).toBe("record store");
    expect(unavailableStore(new StoreUnavailableError("activity store", refused))).toBe("activity store");
  });
});

/**
 * A ClickHouse server that stops answering: its refused connections are the activity store's
 * unavailability, classified by the server store itself, and an analytics query answers 503
 * naming the activity store (not the record store, which is fine).
 */
describe("a ClickHouse server refusing connections: 503 naming the activity store", () => {
  let fake: Server;
  let port: number;
  let activity: ActivityStore;
  let t: TestApp;

  beforeAll(async () => {
    // Enough of ClickHouse's HTTP interface for the store to open: every DDL statement answers 200.
    fake = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.end(""));
    });
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    port = (fake.address() as AddressInfo).port;
    activity = await openClickHouseServerStore({ url: `http://127.0.0.1:${port}` });
    t = await makeTestApp({ activity });
    fake.closeAllConnections();
    await new Promise<void>((r) => fake.close(() => r()));
  });
  afterAll(async () => {
    await t?.close();
    await activity?.close();
  });

  it("opening a store on a port nothing listens on fails as the activity store's unavailability", async () => {
    const failure = await openClickHouseServerStore({
      url: `http://127.0.0.1:${port}`,
      database: "gh_x",
    }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect((failure as StoreUnavailableError).store).toBe("activity store");
  });

  it("an analytics query answers 503 with Retry-After and names the activity store", async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const r = await t.call({
      method: "POST",
      url: "/api/v1/analytics/query",
      payload: {
        metrics: ["request_count"],
        time_range: { start: iso(Date.now() - 3_600_000), end: iso(Date.now()) },
      },
    });
    expect(r.statusCode, r.body).toBe(503);
    expect(r.headers["retry-after"]).toBe("1");
    expect(r.json().error.message).toBe("The activity store is busy or unreachable; retry shortly");
    expect(r.json().error.metadata.request_id).toBeTruthy();
  });
});

/**
 * A ClickHouse server that answers but says "not now" (too many parts, out of memory, too many
 * queries): the activity store's unavailability too, so analytics answers 503 and ingest parks the
 * rows; a statement the server calls wrong stays what it is. The fake speaks ClickHouse's HTTP
 * interface for an exception: status 500, `X-ClickHouse-Exception-Code`, and the text
 * `Code: N. DB::Exception: … (NAME) (version …)`, which the official client parses.
 */
describe("a ClickHouse server answering its own 'not now' errors", () => {
  let fake: Server;
  let activity: ActivityStore;
  let t: TestApp;
  /** The exception every statement answers with; null: every statement succeeds, with no rows. */
  let failing: { code: number; name: string; message: string } | null = null;

  beforeAll(async () => {
    fake = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (!failing) return void res.end("");
        res.writeHead(500, { "X-ClickHouse-Exception-Code": String(failing.code) });
        res.end(
          `Code: ${failing.code}. DB::Exception: ${failing.message}. (${failing.name}) (version 24.8.4.13 (official build))\n`,
        );
      });
    });
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    const port = (fake.address() as AddressInfo).port;
    activity = await openClickHouseServerStore({ url: `http://127.0.0.1:${port}` });
    t = await makeTestApp({ activity });
  });
  afterAll(async () => {
    await t?.close();
    await activity?.close();
    fake?.closeAllConnections();
    await new Promise<void>((r) => (fake ? fake.close(() => r()) : r()));
  });

  const analytics = () =>
    t.call({
      method: "POST",
      url: "/api/v1/analytics/query",
      payload: {
        metrics: ["request_count"],
        time_range: {
          start: new Date(Date.now() - 3_600_000).toISOString(),
          end: new Date(Date.now()).toISOString(),
        },
      },
    });

  it.each([
    [
      252,
      "TOO_MANY_PARTS",
      "Too many parts (3001 with average size of 1.02 KiB) in table 'default.generations'",
    ],
    [241, "MEMORY_LIMIT_EXCEEDED", "Memory limit (total) exceeded: would use 7.45 GiB, maximum: 7.20 GiB"],
    [202, "TOO_MANY_SIMULTANEOUS_QUERIES", "Too many simultaneous queries. Maximum: 100"],
  ])("%s %s: an analytics query answers 503 naming the activity store", async (code, name, message) => {
    expect(CLICKHOUSE_NOT_NOW_CODES.get(code)).toBe(name);
    failing = { code, name, message };
    try {
      const r = await analytics();
      expect(r.statusCode, r.body).toBe(503);
      expect(r.headers["retry-after"]).toBe("1");
      expect(r.json().error.message).toBe("The activity store is busy or unreachable; retry shortly");
    } finally {
      failing = null;
    }
    expect((await analytics()).statusCode).toBe(200);
  });

  it("ingest while its merges are behind (TOO_MANY_PARTS): the batch is accepted and its rows parked", async () => {
    const keyed = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "parts" } });
    const key = keyed.json<{ key: string }>().key;
    failing = { code: 252, name: "TOO_MANY_PARTS", message: "Too many parts (3001)" };
    try {
      const r = await t.call({
        method: "POST",
        url: "/api/v1/activity/generations",
        payload: {
          generations: [
            wireGeneration({
              id: "gen-too-many-parts",
              created_at: new Date(t.clock.now().getTime() - 1_000).toISOString(),
              api_key_hash: hashKey(key),
            }),
          ],
        },
      });
      expect(r.statusCode, r.body).toBe(200);
    } finally {
      failing = null;
    }
    expect(await countPendingRows(t.ctx.store.db, t.organizationId)).toBe(1);
  });

  it("a statement the server calls wrong is not its unavailability", async () => {
    failing = {
      code: 47,
      name: "UNKNOWN_IDENTIFIER",
      message: "Missing columns: 'nope' while processing query",
    };
    try {
      const err = await activity.insert([activityRow()], []).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(StoreUnavailableError);
      expect(unavailableStore(err)).toBe(null);
      expect((err as { code?: unknown }).code).toBe("47");
    } finally {
      failing = null;
    }
  });
});

/**
 * A PostgreSQL server that refuses a connection (here: a role limited to one connection, which a
 * long transaction holds) makes the API answer 503 with Retry-After, not 500, and the request
 * succeeds once a connection is free again.
 */
describe.skipIf(!PG_URL)("PostgreSQL refusing a connection: 503 with Retry-After", () => {
  const role = `gh_limited_${randomBytes(4).toString("hex")}`;
  let dbi: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let store: RecordStore;
  let t: TestApp;
  const admin = async (text: string) => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    dbi = await freshPostgresDatabase();
    await admin(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 1`);
    const dbName = new URL(dbi.url).pathname.slice(1);
    await admin(`ALTER DATABASE ${dbName} OWNER TO ${role}`);
    const url = new URL(dbi.url);
    url.username = role;
    store = await openPostgresStore(url.toString(), 2);
    t = await makeTestApp({ store });
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
    await dbi?.drop();
    await admin(`DROP ROLE IF EXISTS ${role}`);
  });

  it("answers 503 with Retry-After while the only connection allowed is taken, then 200", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const began = new Promise<void>((r) => (started = r));
    const holding = store.transaction(async (trx) => {
      await trx.selectFrom("workspaces").select("id").execute();
      started();
      await held;
    });
    await began;
    const put = () =>
      t.call({ method: "PUT", url: "/api/v1/workspaces/default/budgets/daily", payload: { limit_usd: 5 } });
    const refused = await put();
    expect(refused.statusCode).toBe(503);
    expect(refused.headers["retry-after"]).toBe("1");
    const body = refused.json();
    expect(body.error.code).toBe(503);
    expect(body.error.message).toBe("The record store is busy or unreachable; retry shortly");
    expect(body.error.metadata.request_id).toBeTruthy();
    release();
    await holding;
    const ok = await put();
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.limit_usd).toBe(5);
  });
});

/**
 * A PostgreSQL connection lost in the middle of a statement (here: a loopback TCP relay to the
 * server, cut while `pg_sleep` runs) is the record store's unavailability, wrapped by the pool's
 * connection itself; the next statement gets a fresh connection.
 */
describe.skipIf(!PG_URL)("PostgreSQL connection lost mid-statement", () => {
  let relay: TcpRelay;
  let store: RecordStore;
  let dbi: Awaited<ReturnType<typeof freshPostgresDatabase>>;

  beforeAll(async () => {
    dbi = await freshPostgresDatabase();
    const target = new URL(dbi.url);
    relay = await startTcpRelay(target.hostname, Number(target.port || 5432));
    store = await openPostgresStore(relay.urlThrough(dbi.url), 2);
  });
  afterAll(async () => {
    await store?.close();
    await relay?.close();
    await dbi?.drop();
  });

  it("rejects with StoreUnavailableError naming the record store, then serves the next statement", async () => {
    const running = sql`select pg_sleep(5)`.execute(store.db).then(
      () => null,
      (err: unknown) => err,
    );
    await new Promise((r) => setTimeout(r, 200));
    relay.cut();
    const failure = await running;
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect(unavailableStore(failure)).toBe("record store");
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(store.db);
    expect(rows[0]?.one).toBe(1);
  });
});
