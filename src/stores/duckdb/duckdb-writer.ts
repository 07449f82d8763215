import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { TIMESTAMP, VARCHAR, type DuckDBPreparedStatement } from "@duckdb/node-api";
import type { ActivityRow, ClassificationRow } from "../../activity/activity-row.js";
import type { FeedbackRow } from "../../activity/feedback-row.js";
import {
  FEEDBACK_COLUMNS,
  GENERATION_COLUMNS,
  TAG_COLUMNS,
  unseenFeedbackOf,
  unseenOf,
  type ExistingIds,
  type StorageColumn,
} from "../activity-columns.js";
import type { ExclusiveActivityWriter } from "../activity-store.js";
import { mergeEncoded, type EncodedActivity, type EncodedTable } from "../column-texts.js";
import type { DuckDbConnections, Serial } from "./duckdb-connections.js";
import type { ReadBarrier } from "./duckdb-query.js";
import { appendRows, ID_SEPARATOR, insertSqlOf, tsValue } from "./duckdb-values.js";

/**
 * Writes of the embedded activity store, all on the writer connection and inside one transaction
 * each (generations and tags land together or not at all): insert() with its existence check
 * (ActivityStore.insert), insertFeedback() likewise, and the buffered path of the ingest flusher
 * (ExclusiveActivityWriter). `serialised` is the writer connection's queue; the callers of insert
 * and insertFeedback run them there.
 */
export interface DuckDbWriter {
  insert(rows: readonly ActivityRow[], tags: readonly ClassificationRow[]): Promise<void>;
  insertFeedback(rows: readonly FeedbackRow[]): Promise<void>;
  exclusive: ExclusiveActivityWriter;
  /** The read barrier registered through exclusive.beforeRead, if any. */
  readBarrier(): ReadBarrier | null;
}

export function duckDbWriter(conns: DuckDbConnections, serialised: Serial, path: string): DuckDbWriter {
  const existing: ExistingIds = async (table, idColumn, org, minMs, maxMs, ids) => {
    const reader = await conns.writer.runAndReadAll(
      `SELECT DISTINCT ${idColumn} AS id FROM ${table}
       WHERE organization_id = $org AND created_at BETWEEN $lo AND $hi
         AND ${idColumn} IN (SELECT unnest(string_split($ids, $sep)))`,
      { org, lo: tsValue(minMs), hi: tsValue(maxMs), ids: ids.join(ID_SEPARATOR), sep: ID_SEPARATOR },
      { org: VARCHAR, lo: TIMESTAMP, hi: TIMESTAMP, ids: VARCHAR, sep: VARCHAR },
    );
    return new Set(reader.getRowObjectsJS().map((r) => r.id as string));
  };

  async function insert(rows: readonly ActivityRow[], tags: readonly ClassificationRow[]): Promise<void> {
    conns.assertOpen();
    const { rows: newRows, tags: newTags } = await unseenOf(rows, tags, existing);
    if (newRows.length === 0 && newTags.length === 0) return;
    await inWriterTransaction(async () => {
      await appendRows(conns.writer, "generations", GENERATION_COLUMNS, newRows);
      await appendRows(conns.writer, "generation_tags", TAG_COLUMNS, newTags);
    });
  }

  async function insertFeedback(rows: readonly FeedbackRow[]): Promise<void> {
    conns.assertOpen();
    const fresh = await unseenFeedbackOf(rows, existing);
    if (fresh.length === 0) return;
    await inWriterTransaction(() => appendRows(conns.writer, "generation_feedback", FEEDBACK_COLUMNS, fresh));
  }

  /** The writer's INSERT statements, prepared once (see insertSqlOf). */
  const statements = new Map<string, DuckDBPreparedStatement>();
  const GENERATIONS_INSERT = insertSqlOf("generations", GENERATION_COLUMNS);
  const TAGS_INSERT = insertSqlOf("generation_tags", TAG_COLUMNS);

  async function insertTexts(sql: string, texts: readonly string[]): Promise<void> {
    let st = statements.get(sql);
    if (!st) statements.set(sql, (st = await conns.writer.prepare(sql)));
    for (let j = 0; j < texts.length; j++) st.bindVarchar(j + 1, texts[j] as string);
    await st.run();
  }

  async function writeTable<Row>(
    table: "generations" | "generation_tags",
    cols: readonly StorageColumn<Row>[],
    sql: string,
    t: EncodedTable<Row>,
  ): Promise<void> {
    if (t.count === 0) return;
    if (t.texts) await insertTexts(sql, t.texts);
    else await appendRows(conns.writer, table, cols, t.rows);
  }

  /** fn inside one transaction of the writer connection (call it serialised). */
  async function inWriterTransaction(fn: () => Promise<void>): Promise<void> {
    await conns.writer.run("BEGIN TRANSACTION");
    try {
      await fn();
      await conns.writer.run("COMMIT");
    } catch (err) {
      await conns.writer.run("ROLLBACK").catch(() => undefined);
      throw err;
    }
  }

  const seqList = (seqs: readonly number[]) => ({
    values: { seqs: seqs.join(",") },
    types: { seqs: VARCHAR },
  });

  /** Batches and their buffer sequence numbers, in one transaction (ExclusiveActivityWriter.apply). */
  async function apply(batches: readonly EncodedActivity[], seqs: readonly number[]): Promise<void> {
    conns.assertOpen();
    const { generations, tags } = mergeEncoded(batches);
    await serialised(() =>
      inWriterTransaction(async () => {
        await writeTable("generations", GENERATION_COLUMNS, GENERATIONS_INSERT, generations);
        await writeTable("generation_tags", TAG_COLUMNS, TAGS_INSERT, tags);
        if (seqs.length > 0) {
          const { values, types } = seqList(seqs);
          await conns.writer.run(
            "INSERT INTO ingest_applied SELECT unnest(string_split($seqs, ','))::BIGINT",
            values,
            types,
          );
        }
      }),
    );
  }

  async function applied(): Promise<number[]> {
    conns.assertOpen();
    return serialised(async () => {
      const reader = await conns.writer.runAndReadAll("SELECT seq FROM ingest_applied ORDER BY seq");
      return reader.getColumnsJS()[0]?.map((v) => Number(v)) ?? [];
    });
  }

  async function forget(seqs: readonly number[]): Promise<void> {
    conns.assertOpen();
    if (seqs.length === 0) return;
    const { values, types } = seqList(seqs);
    await serialised(() =>
      conns.writer.run(
        "DELETE FROM ingest_applied WHERE seq IN (SELECT unnest(string_split($seqs, ','))::BIGINT)",
        values,
        types,
      ),
    );
  }

  let readBarrier: ReadBarrier | null = null;

  const exclusive: ExclusiveActivityWriter = {
    owner: path === ":memory:" ? `duckdb:memory:${randomUUID()}` : `duckdb:${hostname()}:${resolve(path)}`,
    session: randomUUID(),
    logDir: path === ":memory:" ? null : `${resolve(path)}.ingest-log`,
    apply,
    applied,
    forget,
    beforeRead: (barrier) => {
      readBarrier = barrier;
    },
  };

  return { insert, insertFeedback, exclusive, readBarrier: () => readBarrier };
}
