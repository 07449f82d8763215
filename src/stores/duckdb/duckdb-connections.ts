import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { DUCKDB_DDL } from "./duckdb-ddl.js";

/**
 * WAL size that triggers a checkpoint. DuckDB's default (16 MB, about 40 ingest batches of 1,000
 * records) makes checkpoints dominate ingest: each one rewrites the table's open row groups, so
 * they cost more as the table grows (0.1-2 s each, ~16 ms per batch amortised, measured with
 * bench:ingest's records); at 128 MB ingest CPU per batch halves and the file stays smaller.
 * The price: up to 128 MB of WAL on disk and in memory, replayed at start after a crash (~1.5 s).
 */
const CHECKPOINT_THRESHOLD = "128MB";
/** Idle read connections kept for reuse; more are opened while queries run concurrently. */
const MAX_IDLE_READERS = 4;
/** A queue that runs its tasks one at a time, in order; a failed task does not stop the next. */
export type Serial = <T>(fn: () => Promise<T>) => Promise<T>;

export function serialQueue(): Serial {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * The connections of one DuckDB database: the instance, the writer connection (every write goes
 * through it, serialised by the caller) and a pool of read connections (idle ones kept up to
 * MAX_IDLE_READERS, more opened while queries run concurrently).
 */
export class DuckDbConnections {
  private closed = false;
  private readonly idle: DuckDBConnection[] = [];
  private readonly busy = new Set<DuckDBConnection>();

  private constructor(
    readonly instance: DuckDBInstance,
    readonly writer: DuckDBConnection,
  ) {}

  /** Opens (or creates) the database and its tables. */
  static async open(opts: {
    path: string;
    memoryLimit?: string | null | undefined;
    threads?: number | null | undefined;
  }): Promise<DuckDbConnections> {
    if (opts.path !== ":memory:") mkdirSync(dirname(opts.path), { recursive: true });
    const instance = await DuckDBInstance.create(opts.path, {
      checkpoint_threshold: CHECKPOINT_THRESHOLD,
      ...(opts.memoryLimit ? { memory_limit: opts.memoryLimit } : {}),
      ...(opts.threads ? { threads: String(opts.threads) } : {}),
    });
    const writer = await instance.connect();
    for (const ddl of DUCKDB_DDL) await writer.run(ddl);
    return new DuckDbConnections(instance, writer);
  }

  assertOpen(): void {
    if (this.closed) throw new Error("activity store is closed");
  }

  /** A read connection of the pool; give it back with release(). */
  async acquire(): Promise<DuckDBConnection> {
    this.assertOpen();
    const conn = this.idle.pop() ?? (await this.instance.connect());
    this.busy.add(conn);
    return conn;
  }

  /** Returns a read connection; an unhealthy one (interrupted) is closed instead of kept. */
  release(conn: DuckDBConnection, healthy: boolean): void {
    this.busy.delete(conn);
    if (healthy && !this.closed && this.idle.length < MAX_IDLE_READERS) this.idle.push(conn);
    else conn.closeSync();
  }

  /** Interrupts running reads and closes every connection and the database. */
  close(): void {
    this.closed = true;
    for (const c of this.busy) c.interrupt();
    for (const c of this.idle.splice(0)) c.closeSync();
    this.writer.closeSync();
    this.instance.closeSync();
  }
}
