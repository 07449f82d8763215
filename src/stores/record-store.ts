import type { CompiledQuery, Kysely, Transaction } from "kysely";
import type { DialectCaps } from "./dialect.js";
import type { Database } from "./schema.js";

/** A handle on the record store (SQLite or PostgreSQL). Repositories take `db` explicitly. */
export interface RecordStore {
  readonly db: Kysely<Database>;
  readonly caps: DialectCaps;
  /** Runs fn in one transaction: all of its writes land, or none. */
  transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * Runs fn while holding the named lock, which every process sharing this store respects
   * (a PostgreSQL advisory lock; SQLite is owned by one process, so an in-process queue). For
   * one-off work that instances starting together must not do twice, such as bootstrap.
   */
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Throws when the store cannot answer. */
  ping(): Promise<void>;
  /**
   * SQLite in a file: a number that changes when another process (the CLI) has committed to the
   * file since the last call (`PRAGMA data_version`); this process's own commits leave it as it is.
   * Absent elsewhere (PostgreSQL sends change notifications; SQLite in memory has no other writer).
   */
  dataVersion?: () => number;
  /**
   * Runs a read-only statement synchronously on a second connection that sees only committed
   * data (SQLite in a file: a read-only connection in WAL mode), never waiting for a transaction
   * in flight on the main one. Absent where there is none (PostgreSQL, SQLite in memory).
   */
  readCommitted?: <R>(query: CompiledQuery<R>) => R[];
  /**
   * Runs `then` once `trx`, a transaction of `transaction()` still in flight, has ended, with
   * whether it committed: before `transaction()`'s promise settles, so nothing awaiting it runs
   * first. For in-memory copies of the store's data kept by the process that owns it (SQLite);
   * absent where other processes write too (PostgreSQL). Throws for any other `trx`.
   */
  afterTransaction?: (trx: Transaction<Database>, then: (committed: boolean) => void) => void;
  /**
   * Where a journal of writes answered before they commit may live (src/gateway/recording/journal.ts),
   * present where one process owns the store: a directory beside its file, or null for a store in
   * memory (a journal in memory, gone with the store as the store is). Absent where other
   * processes share the store (PostgreSQL): there an answer that must be visible to all of them
   * waits for the commit itself.
   */
  readonly journalDir?: string | null;
  close(): Promise<void>;
}

export type Db = Kysely<Database>;
