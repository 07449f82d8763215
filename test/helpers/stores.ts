import { randomBytes } from "node:crypto";
import pg from "pg";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";

export const PG_URL = process.env.GATEHOUSE_TEST_POSTGRES_URL ?? "";
export const REDIS_URL = process.env.GATEHOUSE_TEST_REDIS_URL ?? "";

export const PG_SKIP_REASON =
  "PostgreSQL suites skipped: set GATEHOUSE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test (bash .ci/run does)";
export const REDIS_SKIP_REASON =
  "Redis suites skipped: set GATEHOUSE_TEST_REDIS_URL=redis://127.0.0.1:6379 (bash .ci/run does)";

if (!PG_URL) console.warn(PG_SKIP_REASON);

/** A fresh, empty PostgreSQL database for one suite; dropped by the returned cleanup. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gh_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface StoreFactory {
  name: "sqlite" | "postgres";
  /** Skip reason when the engine is not available here; null when it runs. */
  skip: string | null;
  open(): Promise<RecordStore & { dispose(): Promise<void> }>;
}

export const STORE_FACTORIES: StoreFactory[] = [
  {
    name: "sqlite",
    skip: null,
    open: async () => {
      const s = await openSqliteStore(":memory:");
      return Object.assign(s, { dispose: () => s.close() });
    },
  },
  {
    name: "postgres",
    skip: PG_URL ? null : PG_SKIP_REASON,
    open: async () => {
      const dbi = await freshPostgresDatabase();
      const s = await openPostgresStore(dbi.url, 5);
      return Object.assign(s, {
        dispose: async () => {
          await s.close();
          await dbi.drop();
        },
      });
    },
  },
];
