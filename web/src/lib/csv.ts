import { text } from "./format.ts";

/**
 * A text a spreadsheet would run as a formula: one starting with `=`, `+`, `-` or `@`, or with a
 * tab or carriage return (which some spreadsheets skip before reading the formula).
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell. A text that starts like a formula (an app title sent as `X-Title:
 * =HYPERLINK(...)`) is prefixed with `'`, which spreadsheets read as "this is text" (OWASP's
 * CSV injection advice); numbers are written as they are (a negative number is not a formula).
 */
export function csvCell(v: unknown): string {
  let s = text(v);
  if (typeof v !== "number" && typeof v !== "bigint" && FORMULA_START.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** RFC 4180 CSV of analytics rows: a header of the given columns, then one line per row. */
export function toCsv(columns: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const line = (cells: readonly unknown[]) => cells.map(csvCell).join(",");
  return [line(columns), ...rows.map((r) => line(columns.map((c) => r[c])))].join("\r\n");
}

export function download(name: string, text: string, type = "text/csv"): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
