import { pino } from "pino";
import type { ActivityStore } from "../activity-store.js";
import { DuckDbConnections, serialQueue } from "./duckdb-connections.js";
import {
  COMPACTION_OFF,
  startCompactor,
  type CompactedChunk,
  type CompactionSettings,
} from "./duckdb-compaction.js";
import { activityRowOf } from "../activity-row-of.js";
import { duckDbQuery } from "./duckdb-query.js";
import { duckDbReplayQuery } from "./duckdb-replay.js";
import { duckDbWriter } from "./duckdb-writer.js";

/** Where the store reports what goes wrong in the background (pino's error signature). */
export interface ActivityLogger {
  error(obj: object, msg: string): void;
}

export interface DuckDbStoreOptions {
  /** A file path, or ":memory:". */
  path: string;
  /** DuckDB's memory_limit (`2GB`); past it DuckDB spills to disk. Default: DuckDB's (80% of RAM). */
  memoryLimit?: string | null;
  /** DuckDB's worker threads. Default: DuckDB's (one per core). */
  threads?: number | null;
  /** Background compaction (duckdb-compaction.ts); default: only when compact() is called. */
  compaction?: CompactionSettings;
  /** Background failures (compaction); default: a pino logger writing JSON lines to stderr. */
  logger?: ActivityLogger;
}

/** The embedded store, with its layout maintenance exposed for tools, benchmarks and tests. */
export interface DuckDbActivityStore extends ActivityStore {
  /** Compacts the chunks ready now (see duckdb-compaction.ts); chunkRows overrides the setting. */
  compact(opts?: { nowMs?: number; chunkRows?: number }): Promise<CompactedChunk[]>;
}

/**
 * The embedded activity store: one DuckDB database (a file in the data directory), put together
 * from its connections (duckdb-connections.ts), its writer (duckdb-writer.ts: every write on one
 * connection, serialised, one transaction per batch) and its reads (duckdb-query.ts: a pool of
 * their own, so a slow analytics query never blocks ingest), plus the background compactor.
 */
export async function openDuckDbActivityStore(opts: DuckDbStoreOptions): Promise<DuckDbActivityStore> {
  const conns = await DuckDbConnections.open(opts);
  const logger = opts.logger ?? pino({ name: "gatehouse-activity" }, pino.destination(2));
  /** The writer connection: one statement or transaction at a time. */
  const serialised = serialQueue();
  /**
   * Writers that delete rows of `generations` (compaction): one at a time, so that their deletes
   * never conflict. Appends (the flusher, insert) do not wait for them: DuckDB's appends never
   * conflict, so a compaction chunk (seconds for 1M rows) does not hold ingest up.
   */
  const deleting = serialQueue();

  const compactor = await startCompactor(conns.instance, {
    ...(opts.compaction ?? COMPACTION_OFF),
    serialised: deleting,
    quiescent: serialised,
    onError: (err) => logger.error({ err }, "activity compaction failed (retried later)"),
  });

  const writer = duckDbWriter(conns, serialised, opts.path);
  const query = duckDbQuery(conns, () => writer.readBarrier());
  let closed = false;
  return {
    dialect: "duckdb",
    insert: (rows, tags) => serialised(() => writer.insert(rows, tags)),
    insertFeedback: (rows) => serialised(() => writer.insertFeedback(rows)),
    exclusive: writer.exclusive,
    query,
    generationsForReplay: async (page, opts) =>
      (
        await query(duckDbReplayQuery(page), {
          timeoutMs: opts.timeoutMs,
          organizationId: page.organizationId,
        })
      ).map(activityRowOf),
    ping: async () => {
      const conn = await conns.acquire();
      try {
        await conn.run("SELECT 1");
      } finally {
        conns.release(conn, true);
      }
    },
    compact: (o = {}) => {
      conns.assertOpen();
      return compactor.runNow(o.nowMs, o.chunkRows);
    },
    close: async () => {
      if (closed) return;
      await compactor.stop();
      await deleting(async () => undefined);
      await serialised(async () => undefined);
      closed = true;
      conns.close();
    },
  };
}
