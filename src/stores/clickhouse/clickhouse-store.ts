import type { ActivityRow, ClassificationRow } from "../../activity/activity-row.js";
import type { FeedbackRow } from "../../activity/feedback-row.js";
import {
  FEEDBACK_COLUMNS,
  GENERATION_COLUMNS,
  TAG_COLUMNS,
  unseenFeedbackOf,
  unseenOf,
  type ExistingIds,
} from "../activity-columns.js";
import type { ActivityStore, BoundQuery, QueryOptions } from "../activity-store.js";
import { activityRowOf } from "../activity-row-of.js";
import { CLICKHOUSE_DDL } from "./clickhouse-ddl.js";
import { clickHouseReplayQuery } from "./clickhouse-replay.js";
import { chTimestamp, decodeRows, toJsonEachRow, type ColumnMeta } from "./clickhouse-values.js";

/**
 * What the ClickHouse activity store needs from an engine: the server through @clickhouse/client,
 * or the in-process engine (chdb). Both speak the same SQL and `{name:Type}` parameters.
 */
export interface ClickHouseEngine {
  /** DDL and other statements without a result. */
  command(sql: string): Promise<void>;
  insertJsonEachRow(table: string, rows: readonly Record<string, unknown>[]): Promise<void>;
  /**
   * A SELECT with bound parameters, answered as ClickHouse's JSON format (meta + data) with
   * RESULT_SETTINGS applied. Past timeoutMs the engine query is cancelled (max_execution_time,
   * plus what the engine offers) and the promise rejects with ActivityTimeoutError.
   */
  select(
    sql: string,
    params: Record<string, unknown>,
    timeoutMs: number,
  ): Promise<{ meta: ColumnMeta[]; data: Record<string, unknown>[] }>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * How long a write (its existence check, then its inserts) may wait for the engine, each step
   * at most this long (default 60 s). A server that stops answering then fails the write, rather
   * than holding the record-store transaction that ingest writes it in.
   */
  writeTimeoutMs?: number;
}

/**
 * The activity store over a ClickHouse engine. Inserts are serialised in this process; the
 * existence check reads only the organization's granules in the batch's time range (the table's
 * order key), then generations are written before their tags, so that after a crash between the
 * two the retry finds the generation present, the tags absent, and writes just the tags.
 */
export async function openClickHouseStore(engine: ClickHouseEngine): Promise<ActivityStore> {
  for (const ddl of CLICKHOUSE_DDL) await engine.command(ddl);
  let closed = false;
  let queue: Promise<unknown> = Promise.resolve();
  const serialised = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const existing: ExistingIds = async (table, idColumn, org, minMs, maxMs, ids) => {
    const res = await engine.select(
      `SELECT DISTINCT ${idColumn} AS id FROM ${table}
       WHERE organization_id = {org:String}
         AND created_at BETWEEN {lo:DateTime64(3, 'UTC')} AND {hi:DateTime64(3, 'UTC')}
         AND ${idColumn} IN {ids:Array(String)}`,
      { org, lo: chTimestamp(minMs), hi: chTimestamp(maxMs), ids },
      engine.writeTimeoutMs ?? 60_000,
    );
    return new Set(res.data.map((r) => r.id as string));
  };

  async function insert(rows: readonly ActivityRow[], tags: readonly ClassificationRow[]): Promise<void> {
    if (closed) throw new Error("activity store is closed");
    const { rows: newRows, tags: newTags } = await unseenOf(rows, tags, existing);
    if (newRows.length > 0)
      await engine.insertJsonEachRow("generations", toJsonEachRow(GENERATION_COLUMNS, newRows));
    if (newTags.length > 0)
      await engine.insertJsonEachRow("generation_tags", toJsonEachRow(TAG_COLUMNS, newTags));
  }

  async function insertFeedback(rows: readonly FeedbackRow[]): Promise<void> {
    if (closed) throw new Error("activity store is closed");
    const fresh = await unseenFeedbackOf(rows, existing);
    if (fresh.length > 0)
      await engine.insertJsonEachRow("generation_feedback", toJsonEachRow(FEEDBACK_COLUMNS, fresh));
  }

  async function query(q: BoundQuery, opts: QueryOptions): Promise<Record<string, unknown>[]> {
    if (closed) throw new Error("activity store is closed");
    const res = await engine.select(q.sql, q.params, opts.timeoutMs);
    return decodeRows(res.meta, res.data);
  }

  return {
    dialect: "clickhouse",
    insert: (rows, tags) => serialised(() => insert(rows, tags)),
    insertFeedback: (rows) => serialised(() => insertFeedback(rows)),
    query,
    generationsForReplay: async (page, opts) =>
      (await query(clickHouseReplayQuery(page), { timeoutMs: opts.timeoutMs })).map(activityRowOf),
    ping: () => {
      if (closed) return Promise.reject(new Error("activity store is closed"));
      return engine.ping();
    },
    close: async () => {
      if (closed) return;
      await serialised(async () => undefined);
      closed = true;
      await engine.close();
    },
  };
}
