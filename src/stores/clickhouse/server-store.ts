import { randomUUID } from "node:crypto";
import { createClient, type ClickHouseClient } from "@clickhouse/client";
import { ActivityTimeoutError, type ActivityStore } from "../activity-store.js";
import { openClickHouseStore, type ClickHouseEngine } from "./clickhouse-store.js";
import { CH_TIMEOUT_CODE, RESULT_SETTINGS, parseJsonResult } from "./clickhouse-values.js";

/** Extra time the client waits past max_execution_time before aborting and killing the query. */
const BACKSTOP_MS = 2_000;

export interface ClickHouseServerOptions {
  /** http(s)://user:password@host:8123 */
  url?: string;
  /** Database of the activity tables (created if missing); default: the URL's or `default`. */
  database?: string | null;
  /** A ready client instead of url/database (tests use one over the in-process engine). */
  client?: ClickHouseClient;
}

const isTimeout = (err: unknown): boolean =>
  String((err as { code?: unknown } | null)?.code) === String(CH_TIMEOUT_CODE);

/**
 * A ClickHouse server (or cluster endpoint) through @clickhouse/client. Cancellation: the query
 * runs with max_execution_time (the server stops it itself); if the answer still has not come
 * BACKSTOP_MS later, the request is aborted and `KILL QUERY` is sent for its query_id.
 */
export async function openClickHouseServerStore(opts: ClickHouseServerOptions): Promise<ActivityStore> {
  let client = opts.client;
  if (!client) {
    if (!opts.url) throw new Error("ClickHouse URL is required");
    if (opts.database) {
      const admin = createClient({ url: opts.url });
      try {
        await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(opts.database)}` });
      } finally {
        await admin.close();
      }
    }
    client = createClient({
      url: opts.url,
      ...(opts.database ? { database: opts.database } : {}),
      request_timeout: 300_000,
    });
  }
  const ch = client;
  const engine: ClickHouseEngine = {
    command: async (sql) => {
      await ch.command({ query: sql });
    },
    insertJsonEachRow: async (table, rows) => {
      await ch.insert({ table, values: rows, format: "JSONEachRow" });
    },
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
        throw err;
      } finally {
        clearTimeout(timer);
      }
    },
    ping: async () => {
      const r = await ch.ping();
      if (!r.success) throw r.error;
    },
    close: () => ch.close(),
  };
  return openClickHouseStore(engine);
}

/** A database name as a quoted identifier (backticks doubled). */
function quoteIdent(name: string): string {
  return `\`${name.replace(/\\/g, "\\\\").replace(/`/g, "\\`")}\``;
}
