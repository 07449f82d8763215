import { afterAll, describe, expect, it } from "vitest";
import { PG_SKIP_REASON, PG_URL, freshPostgresDatabase } from "../helpers/stores.js";
import { newKeyString } from "../../src/lib/ids.js";
import { killAll, startServer, stopServer, tempDataDir } from "../helpers/child-server.js";

/**
 * Analytics are never split silently: a second instance on one PostgreSQL record store refuses to
 * start when either instance keeps analytics in an embedded DuckDB file (no CLICKHOUSE_URL); two
 * instances on one data directory get a clear message instead of DuckDB's raw lock error.
 */
afterAll(() => killAll());

describe.skipIf(!PG_URL)("two instances on one DATABASE_URL without CLICKHOUSE_URL", () => {
  if (!PG_URL) console.warn(PG_SKIP_REASON);

  it("the second refuses to start and says to set CLICKHOUSE_URL; it starts once the first is gone", async () => {
    const db = await freshPostgresDatabase();
    try {
      const env = { DATABASE_URL: db.url, GATEHOUSE_BOOTSTRAP_KEY: newKeyString() };
      const a = await startServer(env);
      try {
        const failed = await startServer(env).then(
          () => null,
          (err: Error) => err.message,
        );
        expect(failed).toMatch(
          /gatehouse: failed to start: another Gatehouse instance is running on this DATABASE_URL/,
        );
        expect(failed).toContain("set CLICKHOUSE_URL on every instance");
      } finally {
        await stopServer(a);
      }
      // The lock dies with its holder: a replacement starts.
      const b = await startServer(env);
      await stopServer(b);
    } finally {
      await db.drop();
    }
  }, 60_000);
});

describe("two instances on one data directory", () => {
  it("the second exits with a message naming the file and what to do, not DuckDB's lock error", async () => {
    const dir = tempDataDir();
    const env = { GATEHOUSE_DATA_DIR: dir, GATEHOUSE_BOOTSTRAP_KEY: newKeyString() };
    const a = await startServer(env);
    try {
      const failed = await startServer(env).then(
        () => null,
        (err: Error) => err.message,
      );
      expect(failed).toContain(`the activity store ${dir}/activity.duckdb is in use by another process`);
      expect(failed).toContain("give this instance its own GATEHOUSE_DATA_DIR");
      expect(failed).not.toMatch(/Could not set lock on file/i);
    } finally {
      await stopServer(a);
    }
  }, 60_000);
});
