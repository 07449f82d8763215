import type { ActivityRow, ClassificationRow } from "../activity/activity-row.js";
import { firstPerKey, GENERATION_COLUMNS, TAG_COLUMNS, type StorageColumn } from "./activity-columns.js";

/**
 * The column-text encoding of activity rows, the input of a single-writer store's buffered write
 * (ExclusiveActivityWriter.apply): one text per column, the column's values joined by
 * U+0001, SQL NULL written as U+0002. Plain strings, so a batch can be encoded on a worker thread
 * and handed to the store without copying row objects. Doubles are written as the shortest
 * decimal that round-trips; integers and money (bigint) as exact decimal text.
 */
export const VALUE_SEPARATOR = "\u0001";
export const NULL_MARK = "\u0002";
// eslint-disable-next-line no-control-regex
const SEPARATOR_RE = /[\u0001\u0002]/;

/** A table's rows: column texts, or the rows themselves when a string holds U+0001 or U+0002. */
export type EncodedTable<Row> =
  | { count: number; texts: string[]; rows?: undefined }
  | { count: number; texts?: undefined; rows: readonly Row[] };

export interface EncodedActivity {
  generations: EncodedTable<ActivityRow>;
  tags: EncodedTable<ClassificationRow>;
}

/** The column texts of rows; null when a string holds U+0001 or U+0002 (not encodable). */
export function columnTexts<Row>(cols: readonly StorageColumn<Row>[], rows: readonly Row[]): string[] | null {
  const out = new Array<string>(cols.length);
  const parts = new Array<string>(rows.length);
  for (let j = 0; j < cols.length; j++) {
    const { kind, field } = cols[j] as StorageColumn<Row>;
    const text = kind === "string" || kind === "string?";
    for (let i = 0; i < rows.length; i++) {
      const v = (rows[i] as Row)[field] as unknown;
      if (v === null || v === undefined) parts[i] = NULL_MARK;
      else if (text) {
        if (SEPARATOR_RE.test(v as string)) return null;
        parts[i] = v as string;
      } else if (kind === "bool") parts[i] = v ? "true" : "false";
      else if (v === 0n) parts[i] = "0";
      else if (v === 0) parts[i] = Object.is(v, -0) ? "-0" : "0";
      else parts[i] = (v as number | bigint).toString(); // number or bigint by kind
    }
    out[j] = parts.join(VALUE_SEPARATOR);
  }
  return out;
}

function encodeTable<Row>(cols: readonly StorageColumn<Row>[], rows: readonly Row[]): EncodedTable<Row> {
  if (rows.length === 0) return { count: 0, texts: [] };
  const texts = columnTexts(cols, rows);
  return texts === null ? { count: rows.length, rows } : { count: rows.length, texts };
}

/** Encodes a batch; a repeated (organization, id) keeps its first row, as ActivityStore.insert does. */
export function encodeActivity(
  rows: readonly ActivityRow[],
  tags: readonly ClassificationRow[],
): EncodedActivity {
  const unique = firstPerKey(rows, (r) => `${r.organization_id}\u0000${r.id}`);
  return { generations: encodeTable(GENERATION_COLUMNS, unique), tags: encodeTable(TAG_COLUMNS, tags) };
}

function mergeTable<Row>(tables: readonly EncodedTable<Row>[]): EncodedTable<Row> {
  const present = tables.filter((t) => t.count > 0);
  if (present.length === 0) return { count: 0, texts: [] };
  if (present.length === 1) return present[0] as EncodedTable<Row>;
  const columns = (present[0] as { texts: string[] }).texts.length;
  const texts = new Array<string>(columns);
  for (let j = 0; j < columns; j++) {
    texts[j] = present
      .map((t) => {
        if (!t.texts) throw new Error("mergeEncoded: only column texts can be merged");
        return t.texts[j] as string;
      })
      .join(VALUE_SEPARATOR);
  }
  return { count: present.reduce((n, t) => n + t.count, 0), texts };
}

/**
 * Several encoded batches as one (rows in the order given), for one insert. Batches holding rows
 * instead of column texts cannot be merged with others (throws).
 */
export function mergeEncoded(parts: readonly EncodedActivity[]): EncodedActivity {
  if (parts.length === 1) return parts[0] as EncodedActivity;
  return {
    generations: mergeTable(parts.map((p) => p.generations)),
    tags: mergeTable(parts.map((p) => p.tags)),
  };
}

/**
 * An encoded batch as one string (an ingest-log record, and one message between threads): a
 * JSON header with each table's row count and text lengths, a newline, then the texts end to end.
 * Only batches in column texts (all that ingest produces: it refuses control characters).
 */
export function payloadOf(encoded: EncodedActivity): string {
  const { generations: g, tags: t } = encoded;
  if (!g.texts || !t.texts) throw new Error("payloadOf: only column texts can be buffered");
  const header = {
    g: [g.count, ...g.texts.map((x) => x.length)],
    t: [t.count, ...t.texts.map((x) => x.length)],
  };
  return `${JSON.stringify(header)}\n${g.texts.join("")}${t.texts.join("")}`;
}

/**
 * The payload of generation rows that are objects already, without tags (the outbox payload of
 * the ClickHouse ingest path and of a Broadcast replay).
 */
export function payloadOfRows(rows: readonly ActivityRow[]): string {
  return payloadOf(encodeActivity(rows, []));
}

/** The inverse of payloadOf. */
export function encodedOf(payload: string): EncodedActivity {
  const nl = payload.indexOf("\n");
  const header = JSON.parse(payload.slice(0, nl)) as { g: number[]; t: number[] };
  let at = nl + 1;
  const table = ([count, ...lengths]: number[]): { count: number; texts: string[] } => {
    const texts = lengths.map((n) => payload.slice(at, (at += n)));
    return { count: count as number, texts };
  };
  const generations = withAddedColumns(table(header.g), GENERATION_COLUMNS.length);
  const tags = withAddedColumns(table(header.t), TAG_COLUMNS.length);
  if (at !== payload.length) throw new Error("encodedOf: payload length does not match its header");
  return { generations, tags };
}

/**
 * A payload written before columns were added (a batch buffered or in the outbox across an
 * upgrade) has fewer texts than the table has columns now: columns are only ever added at the
 * end (activity-row.ts ACTIVITY_COLUMNS), so the missing ones are the last, null in its rows.
 */
function withAddedColumns(
  t: { count: number; texts: string[] },
  columns: number,
): { count: number; texts: string[] } {
  if (t.count === 0 || t.texts.length >= columns) return t;
  const nulls = new Array<string>(t.count).fill(NULL_MARK).join(VALUE_SEPARATOR);
  const texts = [...t.texts];
  while (texts.length < columns) texts.push(nulls);
  return { count: t.count, texts };
}
