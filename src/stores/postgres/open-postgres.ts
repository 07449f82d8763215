import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { POSTGRES_CAPS } from "../dialect.js";
import { migrateToLatest } from "../migrations/index.js";
import type { RecordStore } from "../record-store.js";
import type { Database } from "../schema.js";
import { isConnectionFailure, StoreUnavailableError } from "../store-errors.js";

/** PostgreSQL record store, shared by every instance behind a load balancer. */
export async function openPostgresStore(url: string, poolSize = 10): Promise<RecordStore> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 });
  // A broken idle connection must not crash the process; the next checkout reconnects.
  pool.on("error", () => undefined);
  // A connection not had in time (pool exhausted, server refusing or at max_connections) is the
  // store's unavailability, answered 503 with Retry-After, not a bug answered 500.
  const connect = async () => {
    try {
      return classifyFailures(await pool.connect());
    } catch (err) {
      throw new StoreUnavailableError("record store", err);
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

const CLASSIFIED = Symbol("gatehouse.classifiedFailures");

/**
 * The pool's connection, its queries' lost-connection failures (a reset socket, node-postgres's
 * "Connection terminated unexpectedly") wrapped in StoreUnavailableError: the record store's
 * unavailability, told apart here where it is known to be the record store's. Patched once per
 * connection (the pool hands the same client out again). A query given a callback, or a cursor,
 * returns no promise and is left as it is.
 *
 * The connection also gets an `error` listener of its own: node-postgres emits `error` on a client
 * whose connection ends unexpectedly, and the pool listens only while the client is idle, so a
 * connection lost while checked out (a restart, a failover, a network cut mid-statement) was an
 * uncaught exception that ended the process. The statement in flight rejects with the same error
 * (wrapped above), and the pool drops the broken client when it is released.
 */
function classifyFailures(client: pg.PoolClient): pg.PoolClient {
  const marked = client as pg.PoolClient & { [CLASSIFIED]?: true };
  if (marked[CLASSIFIED]) return client;
  marked[CLASSIFIED] = true;
  client.on("error", () => undefined);
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const classified = (...args: unknown[]): unknown => {
    const result = query(...args);
    if (typeof (result as Promise<unknown> | null)?.then !== "function") return result;
    return (result as Promise<unknown>).then(undefined, (err: unknown) => {
      throw isConnectionFailure(err) ? new StoreUnavailableError("record store", err) : err;
    });
  };
  (client as { query: unknown }).query = classified;
  return client;
}
