import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect, sql } from "kysely";
import { SQLITE_CAPS } from "../dialect.js";
import { migrateToLatest } from "../migrations/index.js";
import type { RecordStore } from "../record-store.js";
import type { Database } from "../schema.js";

/**
 * Embedded record store. One process owns the file; Kysely's SQLite driver holds one connection
 * behind a mutex, so every transaction is serialised (no lost updates, no row locks needed).
 */
export async function openSqliteStore(file: string): Promise<RecordStore> {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file);
  raw.pragma("journal_mode = WAL");
  raw.pragma("foreign_keys = ON");
  raw.pragma("busy_timeout = 5000");
  raw.pragma("synchronous = NORMAL");
  // 64-bit integers come back as bigint so that nano-USD sums stay exact.
  raw.defaultSafeIntegers(true);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) });
  await migrateToLatest(db as Kysely<unknown>, SQLITE_CAPS);
  let queue: Promise<unknown> = Promise.resolve();
  return {
    db,
    caps: SQLITE_CAPS,
    transaction: (fn) => db.transaction().execute(fn),
    exclusive: (_name, fn) => {
      const run = queue.then(fn, fn);
      queue = run.catch(() => undefined);
      return run;
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
