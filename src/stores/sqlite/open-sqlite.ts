import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import {
  Kysely,
  SqliteDialect,
  sql,
  type CompiledQuery,
  type SqliteDatabase,
  type Transaction,
} from "kysely";
import { SQLITE_CAPS } from "../dialect.js";
import { FALLBACK_AUTOCHECKPOINT_PAGES, startCheckpointer, type Checkpointer } from "./checkpointer.js";
import { migrateToLatest } from "../migrations/index.js";
import type { RecordStore } from "../record-store.js";
import type { Database } from "../schema.js";

/** Prepared statements kept per connection (by SQL text); least recently used dropped first. */
const STATEMENT_CACHE = 256;
/** Longer SQL (thousands of placeholders, one statement per list length) is not kept. */
const CACHEABLE_SQL = 4_096;

/**
 * The connection as Kysely's driver sees it, with its prepared statements reused: the driver
 * prepares every query again (for ingest's ~10 statements per batch, 0.7 ms of CPU per batch).
 * A statement is busy only while it is iterated (Kysely's stream(), which this project does not
 * use, and which holds the single connection meanwhile anyway); SQLite re-prepares a statement by
 * itself after a schema change.
 */
function cachingStatements(raw: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => raw.close(),
    prepare: (text: string) => {
      if (text.length > CACHEABLE_SQL) return raw.prepare(text);
      let st = cache.get(text);
      if (st) {
        cache.delete(text); // re-inserted below: most recently used last
      } else {
        st = raw.prepare(text);
        if (cache.size >= STATEMENT_CACHE) cache.delete(cache.keys().next().value as string);
      }
      cache.set(text, st);
      return st;
    },
  };
}

/**
 * Embedded record store. One process owns the file; Kysely's SQLite driver holds one connection
 * behind a mutex, so every transaction is serialised (no lost updates, no row locks needed).
 */
/**
 * A second connection, read-only, for `readCommitted`: in WAL mode it reads the last committed
 * state without waiting for the main connection's transaction in flight, synchronously.
 */
function committedReader(file: string): {
  read: NonNullable<RecordStore["readCommitted"]>;
  close: () => void;
} {
  const raw = new BetterSqlite3(file, { readonly: true });
  raw.pragma("busy_timeout = 5000");
  raw.defaultSafeIntegers(true);
  const statements = cachingStatements(raw);
  return {
    read: <R>(query: CompiledQuery<R>) =>
      (statements.prepare(query.sql) as unknown as BetterSqlite3.Statement).all(...query.parameters) as R[],
    close: () => raw.close(),
  };
}

export async function openSqliteStore(file: string): Promise<RecordStore> {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file);
  raw.pragma("journal_mode = WAL");
  raw.pragma("foreign_keys = ON");
  raw.pragma("busy_timeout = 5000");
  raw.pragma("synchronous = NORMAL");
  // 64-bit integers come back as bigint so that nano-USD sums stay exact.
  raw.defaultSafeIntegers(true);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingStatements(raw) }) });
  await migrateToLatest(db as Kysely<unknown>, SQLITE_CAPS);
  // After the migrations, so that it sees the schema; a file only (":memory:" is per connection).
  const reader = file === ":memory:" ? null : committedReader(file);
  const checkpointer = file === ":memory:" ? null : checkpointsOffThread(raw, file);
  let queue: Promise<unknown> = Promise.resolve();
  /** Transactions in flight, each with what runs once it has ended (afterTransaction). */
  const ending = new Map<Transaction<Database>, ((committed: boolean) => void)[]>();
  return {
    db,
    caps: SQLITE_CAPS,
    ...(file === ":memory:"
      ? {}
      : { dataVersion: () => Number(raw.pragma("data_version", { simple: true })) }),
    transaction: async (fn) => {
      let handle: Transaction<Database> | null = null;
      let committed = false;
      try {
        const out = await db.transaction().execute((trx) => {
          handle = trx;
          ending.set(trx, []);
          return fn(trx);
        });
        committed = true;
        return out;
      } finally {
        if (handle !== null) {
          const hooks = ending.get(handle) ?? [];
          ending.delete(handle);
          for (const then of hooks) then(committed);
        }
      }
    },
    afterTransaction: (trx, then) => {
      const hooks = ending.get(trx);
      if (hooks === undefined) throw new Error("afterTransaction: not a transaction in flight of this store");
      hooks.push(then);
    },
    exclusive: (_name, fn) => {
      const run = queue.then(fn, fn);
      queue = run.catch(() => undefined);
      return run;
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    ...(reader ? { readCommitted: reader.read } : {}),
    journalDir: file === ":memory:" ? null : `${resolve(file)}.journal`,
    close: async () => {
      await checkpointer?.close();
      reader?.close();
      await db.destroy();
    },
  };
}

/**
 * Moves the file's WAL checkpoints to a thread of their own (checkpointer.ts). If the thread
 * cannot be created, the store checkpoints in its commits as SQLite does by default.
 */
function checkpointsOffThread(raw: BetterSqlite3.Database, file: string): Checkpointer | null {
  const warn = (message: string): void => process.emitWarning(`SQLite checkpointer (${file}): ${message}`);
  try {
    const checkpointer = startCheckpointer(file, warn);
    raw.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
    return checkpointer;
  } catch (err) {
    warn(`not started (${err instanceof Error ? err.message : String(err)}); checkpoints stay in commits`);
    return null;
  }
}
