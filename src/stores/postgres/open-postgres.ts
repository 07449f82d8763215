import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { POSTGRES_CAPS } from "../dialect.js";
import { migrateToLatest } from "../migrations/index.js";
import type { RecordStore } from "../record-store.js";
import type { Database } from "../schema.js";

/** PostgreSQL record store, shared by every instance behind a load balancer. */
export async function openPostgresStore(url: string, poolSize = 10): Promise<RecordStore> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 });
  // A broken idle connection must not crash the process; the next checkout reconnects.
  pool.on("error", () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  await migrateToLatest(db as Kysely<unknown>, POSTGRES_CAPS);
  return {
    db,
    caps: POSTGRES_CAPS,
    transaction: (fn) => db.transaction().execute(fn),
    // A session-level advisory lock on a connection of its own: fn may use the whole pool. If
    // this process dies, PostgreSQL drops the session and with it the lock.
    exclusive: (name, fn) =>
      db.connection().execute(async (conn) => {
        await sql`select pg_advisory_lock(hashtextextended(${name}, 0))`.execute(conn);
        try {
          return await fn();
        } finally {
          await sql`select pg_advisory_unlock(hashtextextended(${name}, 0))`.execute(conn);
        }
      }),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
