import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import {
  isStoreUnavailable,
  isUniqueViolation,
  StoreUnavailableError,
} from "../../src/stores/store-errors.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { freshPostgresDatabase, PG_URL } from "../helpers/stores.js";

describe("store failures told apart (src/stores/store-errors.ts)", () => {
  it("the store's momentary unavailability, by SQLSTATE class, driver code or the pool's own error", () => {
    for (const code of ["53300", "53100", "08006", "08001", "57P03", "57P01", "40001", "40P01", "55P03"]) {
      expect(isStoreUnavailable({ code }), code).toBe(true);
    }
    for (const code of ["SQLITE_BUSY", "SQLITE_LOCKED", "ECONNREFUSED", "ECONNRESET"]) {
      expect(isStoreUnavailable({ code }), code).toBe(true);
    }
    expect(
      isStoreUnavailable(new StoreUnavailableError(new Error("timeout exceeded when trying to connect"))),
    ).toBe(true);
    // node-postgres's connection lost mid-query: no code, a fixed message.
    expect(isStoreUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    // A broken rule in the data, a syntax error, a plain bug: not the store's unavailability.
    for (const err of [
      { code: "23505" },
      { code: "42601" },
      { code: "SQLITE_CONSTRAINT_UNIQUE" },
      new Error("x"),
      null,
    ]) {
      expect(isStoreUnavailable(err)).toBe(false);
    }
    expect(isUniqueViolation({ code: "23505" })).toBe(true);
    expect(isUniqueViolation({ code: "53300" })).toBe(false);
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
    expect(body.error.message).toContain("retry");
    expect(body.error.metadata.request_id).toBeTruthy();
    release();
    await holding;
    const ok = await put();
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.limit_usd).toBe(5);
  });
});
