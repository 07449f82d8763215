import type { StorageColumn } from "../activity-columns.js";

const pad = (n: number, w = 2): string => String(n).padStart(w, "0");

/** Milliseconds since the epoch → `2026-11-18 12:00:00.000` (UTC, the DateTime64(3, 'UTC') text form). */
export function chTimestamp(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`
  );
}

/**
 * Rows → JSONEachRow objects: 64-bit integers as decimal strings (exact; ClickHouse reads quoted
 * numbers into Int64), timestamps as UTC text, everything else as JSON values.
 */
export function toJsonEachRow<Row>(
  cols: readonly StorageColumn<Row>[],
  rows: readonly Row[],
): Record<string, unknown>[] {
  return rows.map((r) => {
    const o: Record<string, unknown> = {};
    for (const c of cols) {
      const v = r[c.field] as unknown;
      if (v === null || v === undefined) o[c.name] = null;
      else if (c.kind === "timestamp") o[c.name] = chTimestamp(v as number);
      else if (typeof v === "bigint" || typeof v === "number") {
        o[c.name] = c.kind === "int64" || c.kind === "int64?" ? v.toString() : v;
      } else o[c.name] = v;
    }
    return o;
  });
}

/** Settings every ClickHouse query runs with, so results have one representation. */
export const RESULT_SETTINGS = {
  output_format_json_quote_64bit_integers: 1,
  output_format_json_quote_denormals: 0,
  date_time_output_format: "iso",
  session_timezone: "UTC",
} as const;

export interface ColumnMeta {
  name: string;
  type: string;
}

const WIDE_INT = /^U?Int(64|128|256)$/;
const NARROW_NUMBER = /^(U?Int(8|16|32)|Float(32|64)|BFloat16|Decimal.*)$/;

function unwrap(type: string): string {
  for (;;) {
    const m = /^(?:Nullable|LowCardinality)\((.*)\)$/.exec(type);
    if (!m?.[1]) return type;
    type = m[1];
  }
}

/** One value of a JSON result (with RESULT_SETTINGS) → the port's representation. */
export function decodeValue(type: string, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  const t = unwrap(type);
  if (WIDE_INT.test(t)) return BigInt(v as string | number);
  if (NARROW_NUMBER.test(t)) return typeof v === "number" ? v : Number(v);
  if (t === "Bool") return v === true || v === 1 || v === "true";
  if (t.startsWith("DateTime")) return new Date(v as string).toISOString();
  if (t === "Date" || t === "Date32") return `${v as string}T00:00:00.000Z`;
  const arr = /^Array\((.*)\)$/.exec(t);
  if (arr?.[1] && Array.isArray(v)) {
    const inner = arr[1];
    return v.map((x: unknown) => decodeValue(inner, x));
  }
  return v;
}

export function decodeRows(
  meta: readonly ColumnMeta[],
  data: readonly Record<string, unknown>[],
): Record<string, unknown>[] {
  return data.map((row) => {
    const out: Record<string, unknown> = {};
    for (const m of meta) out[m.name] = decodeValue(m.type, row[m.name]);
    return out;
  });
}

/** ClickHouse error code of a timed-out query (TIMEOUT_EXCEEDED). */
export const CH_TIMEOUT_CODE = 159;

/**
 * Parses a JSON-format result. chDB (3.4) has a quirk: after a query fails mid-output (a timeout),
 * the failed query's partial document is prepended to the next result on the same session. The
 * answer is then the last document of the text, each document starting with `{` on its own line.
 * A statement without a result set (a DELETE, an ALTER) answers with an empty body: no rows.
 */
export function parseJsonResult(text: string): { meta: ColumnMeta[]; data: Record<string, unknown>[] } {
  if (text.trim() === "") return { meta: [], data: [] };
  try {
    return JSON.parse(text) as { meta: ColumnMeta[]; data: Record<string, unknown>[] };
  } catch (err) {
    const at = text.lastIndexOf("\n{\n");
    if (at < 0) throw err;
    return JSON.parse(text.slice(at + 1)) as { meta: ColumnMeta[]; data: Record<string, unknown>[] };
  }
}
