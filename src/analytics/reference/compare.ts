import type { CanonicalValue } from "../result/canonical.js";

/** Strings compare by UTF-8 bytes, as DuckDB and ClickHouse do (not by UTF-16 code units). */
export function compareValues(a: CanonicalValue, b: CanonicalValue): number {
  if (a === b) return 0;
  // NULLS LAST in both directions is applied by the caller; here null sorts last.
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === "string" && typeof b === "string") return Buffer.compare(Buffer.from(a), Buffer.from(b));
  if (typeof a === "bigint" && typeof b === "bigint") return a < b ? -1 : a > b ? 1 : 0;
  const na = Number(a);
  const nb = Number(b);
  return na < nb ? -1 : na > nb ? 1 : 0;
}
