/**
 * Many rows as ONE bound parameter on SQLite: a JSON array that a statement reads with json_each,
 * instead of thousands of bound values in a statement built per call (Kysely compiling a
 * 1,000-row VALUES list costs milliseconds). Text and integers round-trip exactly; null is NULL.
 *
 * Returns null when a text would not round-trip (JSON.stringify escapes a lone surrogate, which
 * SQLite's JSON decoder and the driver's own binding encode differently): callers then use their
 * general statement. Any `\u` escape is treated that way (a literal backslash-u only costs the
 * fast path).
 */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function jsonRows(rows: readonly (readonly (string | number | bigint | null)[])[]): string | null {
  const parts = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as readonly (string | number | bigint | null)[];
    const cells = new Array<string>(row.length);
    for (let j = 0; j < row.length; j++) {
      const v = row[j];
      if (v === null || v === undefined) cells[j] = "null";
      else if (typeof v === "string") cells[j] = JSON.stringify(v);
      else if (typeof v === "bigint") {
        if (v < INT64_MIN || v > INT64_MAX) return null; // the driver refuses it: let it say so
        cells[j] = v.toString();
      } else if (Number.isSafeInteger(v)) cells[j] = String(v);
      else return null; // only integers are exact in both directions
    }
    parts[i] = `[${cells.join(",")}]`;
  }
  const text = `[${parts.join(",")}]`;
  return text.includes("\\u") ? null : text;
}

/** A list of texts as one JSON parameter (see jsonRows), or null when one would not round-trip. */
export function jsonTexts(values: readonly string[]): string | null {
  const text = JSON.stringify(values);
  return text.includes("\\u") ? null : text;
}
