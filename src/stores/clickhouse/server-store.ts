import { randomUUID } from "node:crypto";
import { ClickHouseError, ClickHouseLogLevel, createClient, type ClickHouseClient } from "@clickhouse/client";
import { ActivityTimeoutError, type ActivityStore } from "../activity-store.js";
import { openClickHouseStore, type ClickHouseEngine } from "./clickhouse-store.js";
import { CH_TIMEOUT_CODE, RESULT_SETTINGS, parseJsonResult } from "./clickhouse-values.js";
import { isConnectionFailure, StoreUnavailableError } from "../store-errors.js";

/** Extra time the client waits past max_execution_time before aborting and killing the query. */
const BACKSTOP_MS = 2_000;

export interface ClickHouseServerOptions {
  /** http(s)://user:password@host:8123 */
  url?: string;
  /** Database of the activity tables (created if missing); default: the URL's or `default`. */
  database?: string | null;
  /** A ready client instead of url/database (tests use one over the in-process engine). */
  client?: ClickHouseClient;
  /** ClickHouseEngine.writeTimeoutMs; default DEFAULT_WRITE_TIMEOUT_MS. */
  writeTimeoutMs?: number;
}

/**
 * How long a write may wait for the server. Ingest writes inside its record-store transaction,
 * which holds the key's ledger rows: a server that stops answering must not hold every request of
 * that key for the client's 300 s request timeout. Past it the write is the activity store's
 * unavailability, and ingest parks the rows (src/domain/ingest/pipeline/pending-activity.ts).
 */
export const DEFAULT_WRITE_TIMEOUT_MS = 30_000;

/**
 * The client's own console lines off: they are unstructured text beside Gatehouse's JSON log, and
 * every failure they would report also rejects the call, which Gatehouse logs itself (the 503's
 * warning line, an ingest's retry), in its own log with its own redaction.
 */
const QUIET = { log: { level: ClickHouseLogLevel.OFF } };

const isTimeout = (err: unknown): boolean =>
  String((err as { code?: unknown } | null)?.code) === String(CH_TIMEOUT_CODE);

/**
 * ClickHouse's own error codes (its src/Common/ErrorCodes.cpp) that mean "not now", not "wrong":
 * the server is out of memory, disk, connections or query slots, its merges are behind its inserts,
 * a replica or Keeper is unreachable, or it is shutting down. The same statement can succeed later.
 * An insert whose outcome is unknown (319) is one too: the rows are written again later, and the
 * store skips those it already holds.
 */
export const CLICKHOUSE_NOT_NOW_CODES: ReadonlyMap<number, string> = new Map([
  [173, "CANNOT_ALLOCATE_MEMORY"],
  [202, "TOO_MANY_SIMULTANEOUS_QUERIES"],
  [203, "NO_FREE_CONNECTION"],
  [209, "SOCKET_TIMEOUT"],
  [210, "NETWORK_ERROR"],
  [225, "NO_ZOOKEEPER"],
  [236, "ABORTED"],
  [241, "MEMORY_LIMIT_EXCEEDED"],
  [242, "TABLE_IS_READ_ONLY"],
  [243, "NOT_ENOUGH_SPACE"],
  [252, "TOO_MANY_PARTS"],
  [254, "NO_ACTIVE_REPLICAS"],
  [265, "NO_AVAILABLE_REPLICA"],
  [279, "ALL_CONNECTION_TRIES_FAILED"],
  [285, "TOO_FEW_LIVE_REPLICAS"],
  [319, "UNKNOWN_STATUS_OF_INSERT"],
  [364, "RECEIVED_ERROR_TOO_MANY_REQUESTS"],
  [394, "QUERY_WAS_CANCELLED"],
  [415, "ALL_REPLICAS_LOST"],
  [439, "CANNOT_SCHEDULE_TASK"],
  [519, "NO_REMOTE_SHARD_AVAILABLE"],
  [999, "KEEPER_EXCEPTION"],
]);

/** A ClickHouse server's error that says "not now" (CLICKHOUSE_NOT_NOW_CODES). */
const isNotNow = (err: unknown): boolean =>
  err instanceof ClickHouseError && CLICKHOUSE_NOT_NOW_CODES.has(Number(err.code));

/**
 * The server's failure as the activity store's: a refused, reset or timed-out connection, or the
 * server's own "not now" (CLICKHOUSE_NOT_NOW_CODES), is its momentary unavailability (the API
 * answers 503 naming the activity store; ingest parks the rows for a later pass); anything else
 * (a wrong statement, a bug) as is.
 */
const classified = (err: unknown): unknown =>
  isConnectionFailure(err) || isNotNow(err) ? new StoreUnavailableError("activity store", err) : err;

/** fn's failure classified (`classified`). */
async function atBoundary<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw classified(err);
  }
}

/**
 * A ClickHouse server (or cluster endpoint) through @clickhouse/client. Cancellation: the query
 * runs with max_execution_time (the server stops it itself); if the answer still has not come
 * BACKSTOP_MS later, the request is aborted and `KILL QUERY` is sent for its query_id.
 */
export async function openClickHouseServerStore(opts: ClickHouseServerOptions): Promise<ActivityStore> {
  let client = opts.client;
  if (!client) {
    if (!opts.url) throw new Error("ClickHouse URL is required");
    const database = opts.database;
    if (database) {
      const admin = createClient({ url: opts.url, ...QUIET });
      try {
        await atBoundary(() =>
          admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(database)}` }),
        );
      } finally {
        await admin.close();
      }
    }
    client = createClient({
      ...QUIET,
      url: opts.url,
      ...(opts.database ? { database: opts.database } : {}),
      request_timeout: 300_000,
    });
  }
  const ch = client;
  const writeTimeoutMs = opts.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
  const engine: ClickHouseEngine = {
    command: async (sql) => {
      await atBoundary(() => ch.command({ query: sql }));
    },
    insertJsonEachRow: async (table, rows) => {
      const deadline = AbortSignal.timeout(writeTimeoutMs);
      try {
        await ch.insert({ table, values: rows, format: "JSONEachRow", abort_signal: deadline });
      } catch (err) {
        if (!deadline.aborted) throw classified(err);
        const late = new Error(`no answer to an insert within ${writeTimeoutMs} ms`, { cause: err });
        throw new StoreUnavailableError("activity store", late);
      }
    },
    writeTimeoutMs,
    select: async (sql, params, timeoutMs) => {
      const queryId = randomUUID();
      const abort = new AbortController();
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        abort.abort();
        ch.command({
          query: "KILL QUERY WHERE query_id = {id:String} ASYNC",
          query_params: { id: queryId },
        }).catch(() => undefined);
      }, timeoutMs + BACKSTOP_MS);
      try {
        const rs = await ch.query({
          query: sql,
          query_params: params,
          format: "JSON",
          query_id: queryId,
          abort_signal: abort.signal,
          clickhouse_settings: {
            ...RESULT_SETTINGS,
            max_execution_time: Math.max(timeoutMs, 1) / 1000,
          },
        });
        return parseJsonResult(await rs.text());
      } catch (err) {
        if (killed || isTimeout(err)) throw new ActivityTimeoutError();
        throw classified(err);
      } finally {
        clearTimeout(timer);
      }
    },
    ping: async () => {
      const r = await ch.ping();
      if (!r.success) throw classified(r.error);
    },
    close: () => ch.close(),
  };
  return openClickHouseStore(engine);
}

/** A database name as a quoted identifier (backticks doubled). */
function quoteIdent(name: string): string {
  return `\`${name.replace(/\\/g, "\\\\").replace(/`/g, "\\`")}\``;
}
