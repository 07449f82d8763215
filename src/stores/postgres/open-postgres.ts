import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { POSTGRES_CAPS } from "../dialect.js";
import { migrateToLatest } from "../migrations/index.js";
import type { RecordStore } from "../record-store.js";
import type { Database } from "../schema.js";
import { StoreUnavailableError } from "../store-errors.js";

/** PostgreSQL record store, shared by every instance behind a load balancer. */
export async function openPostgresStore(url: string, poolSize = 10): Promise<RecordStore> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 });
  // A broken idle connection must not crash the process; the next checkout reconnects.
  pool.on("error", () => undefined);
  // A connection not had in time (pool exhausted, server refusing or at max_connections) is the
  // store's unavailability, answered 503 with Retry-After, not a bug answered 500.
  const connect = async () => {
    try {
      return await pool.connect();
    } catch (err) {
      throw new StoreUnavailableError(err);
    }
  };
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: { connect, end: () => pool.end() } }),
  });
  await migrateToLatest(db as Kysely<unknown>, POSTGRES_CAPS);
  return {
    db,
    caps: POSTGRES_CAPS,
    transaction: (fn) => db.transaction().execute(fn),
    // A transaction-level advisory lock, held by a transaction that stays open while fn runs on
    // the rest of the pool: released on commit, on rollback, or when this process dies, and safe
    // behind a transaction-pooling PgBouncer (a session lock is not). Needs a pool of 2 or more.
    exclusive: (name, fn) =>
      db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(trx);
        return fn();
      }),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
