import type { ActivityRow } from "../../../activity/activity-row.js";
import {
  DERIVED_COLUMNS,
  GENERATION_FIELDS,
  MAX_CLASSIFICATIONS,
  MAX_FUTURE_MS,
  MIN_CREATED_AT_MS,
  type GenerationField,
} from "../../../activity/generation-fields.js";
import { UUID_RE } from "../../../lib/ids.js";
import { MAX_USD, usdToNano } from "../../../lib/money.js";
import { parseTimestamp } from "../../../lib/time.js";
import { nestsTooDeep, TOO_DEEP, tooDeepPath } from "./nesting.js";

/*
 * The ingest validator, generated from the field table (activity/generation-fields.ts): each
 * record's fields are read in the table's order by the reader of their check type, and stored
 * under the camelCase of their target (`usage` → usageNano, `created_at` → createdAtMs).
 */

/** Records per request (docs/api-notes.md "Activity ingest"); more is 413. */
export const MAX_RECORDS = 10_000;
/** A record is level 3 of its body (nesting.ts), in NDJSON too. */
const RECORD_LEVEL = 3;
/** Problems listed in error.metadata.problems. */
export const MAX_PROBLEMS = 100;
export { MAX_CLASSIFICATIONS, MAX_FUTURE_MS };

/** A line of an NDJSON body that is not JSON (reported as a problem of that record). */
export class UnparsableLine {
  constructor(readonly line: number) {}
}

export interface Classification {
  classifier_id: string;
  dimension_name: string;
  value: string;
}

/** snake_case → camelCase, as a type. */
type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

/** Columns of `generations` filled from the wire (the others are DERIVED_COLUMNS). */
type WireColumn = Exclude<keyof ActivityRow, keyof typeof DERIVED_COLUMNS>;

/**
 * A record whose shape is valid, keyed by the camelCase of each field's target; key and
 * workspace references are resolved afterwards.
 */
export type ParsedRecord = {
  index: number;
  /** undefined: omitted (the key's workspace); null: legacy activity. */
  workspaceId: string | null | undefined;
  /** undefined: omitted (the key's creator). */
  userId: string | null | undefined;
  appTitle: string | null;
  userName: string | null;
  userEmail: string | null;
  classifications: Classification[];
} & { [K in Exclude<WireColumn, "workspace_id" | "user_id"> as Camel<K>]: ActivityRow[K] };

const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Where a field's value is kept in a ParsedRecord. */
export function parsedKeyOf(f: GenerationField): string {
  const t = f.target;
  return camel("column" in t ? t.column : "label" in t ? t.label : f.wire);
}

/** Problems of one request, in record order, capped at MAX_PROBLEMS. */
export class Problems {
  readonly list: { index: number; text: string }[] = [];
  total = 0;
  add(index: number, text: string): void {
    this.total += 1;
    if (this.list.length < MAX_PROBLEMS) this.list.push({ index, text });
  }
  get full(): boolean {
    return this.list.length >= MAX_PROBLEMS;
  }
  sorted(): string[] {
    return [...this.list].sort((a, b) => a.index - b.index).map((p) => p.text);
  }
}

// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f]/;
const SNAKE_RE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

type Raw = Record<string, unknown>;

const isObject = (v: unknown): v is Raw => typeof v === "object" && v !== null && !Array.isArray(v);

/*
 * The readers below are plain module functions (no closures per record: a batch has thousands of
 * records, and closures cost an allocation each, plus a name definition under tsx). Each reports
 * its problem as `generations[i].field: message` and returns a neutral value.
 */
function fail(problems: Problems, i: number, field: string, msg: string): void {
  problems.add(i, `generations[${i}].${field}: ${msg}`);
}

function requiredString(
  raw: Raw,
  field: string,
  max: number,
  i: number,
  problems: Problems,
  re?: RegExp,
  reMsg?: string,
): string {
  const v = raw[field];
  if (v === undefined || v === null) fail(problems, i, field, "is required");
  else if (typeof v !== "string") fail(problems, i, field, "must be a string");
  else if (v.length < 1 || v.length > max)
    fail(problems, i, field, `must be a string of 1 to ${max} characters`);
  else if (CONTROL_RE.test(v)) fail(problems, i, field, "must not contain control characters");
  else if (re && !re.test(v)) fail(problems, i, field, reMsg ?? `must match ${String(re)}`);
  else return v;
  return "";
}

/** Optional text: omitted, null or "" → null. */
function optionalString(raw: Raw, field: string, i: number, problems: Problems, max: number): string | null {
  const v = raw[field];
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string") fail(problems, i, field, "must be a string or null");
  else if (v.length > max) fail(problems, i, field, `at most ${max} characters`);
  else if (CONTROL_RE.test(v)) fail(problems, i, field, "must not contain control characters");
  else return v;
  return null;
}

/**
 * A safe integer >= min; `absent` when omitted or null. An integer beyond 2^53 - 1 is refused for
 * its size: JSON numbers that large lose their exact value in JavaScript (and in a double).
 */
function integer(
  raw: Raw,
  field: string,
  required: boolean,
  min: number,
  absent: number | null,
  i: number,
  problems: Problems,
): number | null {
  const v = raw[field];
  if (v === undefined || v === null) {
    if (required) fail(problems, i, field, "is required");
    return absent;
  }
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) {
    fail(
      problems,
      i,
      field,
      typeof v === "number" && Number.isInteger(v) && v > Number.MAX_SAFE_INTEGER
        ? `must be at most ${Number.MAX_SAFE_INTEGER} (2^53 - 1, the largest integer kept exactly)`
        : `must be an integer >= ${min}`,
    );
    return absent;
  }
  return v;
}

/**
 * usdToNano with a fast path for plain decimals of at most 9 fractional digits (what prices look
 * like): the shortest round-trip decimal's digits are the nano amount, padded. Anything else
 * (exponent notation, more digits: rounding) goes through usdToNano. Same result either way.
 */
function nanoOf(v: number): bigint {
  if (v === 0) return 0n;
  const s = v < 0 ? String(-v) : String(v);
  if (s.indexOf("e") >= 0) return usdToNano(v);
  const dot = s.indexOf(".");
  let nano: bigint;
  if (dot < 0) nano = BigInt(s) * 1_000_000_000n;
  else if (s.length - dot - 1 <= 9) nano = BigInt(s.slice(0, dot) + s.slice(dot + 1).padEnd(9, "0"));
  else return usdToNano(v);
  return v < 0 ? -nano : nano;
}

function usd(
  raw: Raw,
  field: string,
  required: boolean,
  allowNegative: boolean,
  i: number,
  problems: Problems,
): bigint {
  const v = raw[field];
  if (v === undefined || v === null) {
    if (required) fail(problems, i, field, "is required");
    return 0n;
  }
  if (typeof v !== "number" || !Number.isFinite(v) || (!allowNegative && v < 0)) {
    fail(problems, i, field, allowNegative ? "must be a number" : "must be a number >= 0");
    return 0n;
  }
  if (Math.abs(v) > MAX_USD) {
    fail(problems, i, field, `must be at most ${MAX_USD} in absolute value`);
    return 0n;
  }
  return nanoOf(v);
}

function flag(raw: Raw, field: string, i: number, problems: Problems): boolean {
  const v = raw[field];
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") {
    fail(problems, i, field, "must be a boolean");
    return false;
  }
  return v;
}

function millis(raw: Raw, field: string, required: boolean, i: number, problems: Problems): number | null {
  const v = raw[field];
  if (v === undefined || v === null) {
    if (required) fail(problems, i, field, "is required");
    return null;
  }
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
    fail(problems, i, field, "must be a number >= 0");
    return null;
  }
  return v;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Digits of s at [from, to) as a number; -1 when one is not a digit. */
function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let k = from; k < to; k++) {
    const d = s.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * Epoch milliseconds of `YYYY-MM-DDTHH:MM:SS[.f{1,3}]Z` with every field in its ordinary range
 * (the form gateways send), computed without a regex or Date parsing; NaN for anything else,
 * which then goes through parseTimestamp (offsets, long fractions, unusual values). Both agree
 * wherever this one answers.
 */
function fastUtcMs(s: string): number {
  const n = s.length;
  if (n !== 20 && (n < 22 || n > 24)) return NaN;
  if (
    s.charCodeAt(4) !== 45 || // -
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 84 || // T
    s.charCodeAt(13) !== 58 || // :
    s.charCodeAt(16) !== 58 ||
    s.charCodeAt(n - 1) !== 90 // Z
  ) {
    return NaN;
  }
  let ms = 0;
  if (n > 20) {
    if (s.charCodeAt(19) !== 46) return NaN; // .
    const f = digits(s, 20, n - 1);
    if (f < 0) return NaN;
    ms = f * (n === 22 ? 100 : n === 23 ? 10 : 1);
  }
  const y = digits(s, 0, 4);
  const mo = digits(s, 5, 7);
  const d = digits(s, 8, 10);
  const h = digits(s, 11, 13);
  const mi = digits(s, 14, 16);
  const se = digits(s, 17, 19);
  if (y < 1000 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59) {
    return NaN;
  }
  const leap = mo === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (DAYS_IN_MONTH[mo - 1] as number) + (leap ? 1 : 0)) return NaN;
  return Date.UTC(y, mo - 1, d, h, mi, se, ms);
}

/** created_at → epoch ms, or 0 after reporting the problem. */
function createdAt(raw: Raw, field: string, i: number, nowMs: number, problems: Problems): number {
  const c = raw[field];
  if (c === undefined || c === null) {
    fail(problems, i, field, "is required");
    return 0;
  }
  let ms = typeof c === "string" ? fastUtcMs(c) : NaN;
  if (Number.isNaN(ms)) {
    const d = typeof c === "string" ? parseTimestamp(c) : null;
    if (!d) {
      fail(
        problems,
        i,
        field,
        "must be an RFC 3339 timestamp with seconds and an offset (2026-11-18T12:00:00Z)",
      );
      return 0;
    }
    ms = d.getTime();
  }
  if (ms < MIN_CREATED_AT_MS) fail(problems, i, field, "must not be before 2000-01-01T00:00:00Z");
  else if (ms > nowMs + MAX_FUTURE_MS)
    fail(problems, i, field, "must not be more than 24 hours in the future");
  else return ms;
  return 0;
}

function classificationsOf(raw: Raw, field: string, i: number, problems: Problems): Classification[] {
  const out: Classification[] = [];
  const cl = raw[field];
  if (cl === undefined || cl === null) return out;
  if (!Array.isArray(cl)) {
    fail(problems, i, field, "must be an array");
    return out;
  }
  if (cl.length > MAX_CLASSIFICATIONS) {
    fail(problems, i, field, `at most ${MAX_CLASSIFICATIONS} items`);
    return out;
  }
  for (let j = 0; j < cl.length; j++) {
    const item: unknown = cl[j];
    const f = `classifications[${j}]`;
    if (!isObject(item)) {
      fail(problems, i, f, "must be an object");
      continue;
    }
    const { classifier_id: cid, dimension_name: dim, value } = item;
    let ok = true;
    if (typeof cid !== "string" || !UUID_RE.test(cid)) {
      fail(problems, i, `${f}.classifier_id`, "must be a UUID");
      ok = false;
    }
    if (typeof dim !== "string" || dim.length > 64 || !SNAKE_RE.test(dim)) {
      fail(problems, i, `${f}.dimension_name`, "must be a snake_case name of at most 64 characters");
      ok = false;
    }
    if (typeof value !== "string" || value.length < 1 || value.length > 256 || CONTROL_RE.test(value)) {
      fail(problems, i, `${f}.value`, "must be a string of 1 to 256 characters");
      ok = false;
    }
    if (ok) {
      out.push({
        classifier_id: (cid as string).toLowerCase(),
        dimension_name: dim as string,
        value: value as string,
      });
    }
  }
  return out;
}

/**
 * Checks the shape of every record (docs/generation-record.md) and normalises it: money to nano-USD,
 * timestamps to epoch milliseconds, defaults applied. Problems are collected for all records
 * (first MAX_PROBLEMS kept) so that the caller can answer with all of them at once.
 */
export function parseRecords(items: readonly unknown[], nowMs: number, problems: Problems): ParsedRecord[] {
  const out: ParsedRecord[] = [];
  for (let i = 0; i < items.length && !problems.full; i++) {
    const rec = parseRecord(items[i], i, nowMs, problems);
    if (rec) out.push(rec);
  }
  return out;
}

function parseRecord(raw: unknown, i: number, nowMs: number, problems: Problems): ParsedRecord | null {
  if (raw instanceof UnparsableLine) {
    problems.add(i, `generations[${i}]: is not valid JSON (line ${raw.line})`);
    return null;
  }
  if (!isObject(raw)) {
    problems.add(i, `generations[${i}]: must be an object`);
    return null;
  }
  if (nestsTooDeep(raw, RECORD_LEVEL)) {
    problems.add(i, `generations[${i}]${tooDeepPath(raw, RECORD_LEVEL)}: ${TOO_DEEP}`);
    return null;
  }
  const before = problems.total;
  const rec = readFields(raw, i, nowMs, problems);
  return problems.total === before ? rec : null;
}

/** An optional text field: pattern, upper case and "" as omitted as its check and `absent` say. */
function optionalText(raw: Raw, field: string, i: number, p: Problems, f: GenerationField): unknown {
  const check = f.check as Extract<GenerationField["check"], { type: "text" }>;
  if (f.absent === "key-creator") {
    const v = raw[field];
    if (v === undefined || v === null || v === "") return undefined;
  }
  const v = optionalString(raw, field, i, p, check.max);
  if (v === null || check.pattern === undefined) return v;
  if (!check.pattern.re.test(v)) {
    fail(p, i, field, check.pattern.message);
    return null;
  }
  return check.upper ? v.toUpperCase() : v;
}

/** A UUID, lowercased; omitted stays undefined, null stays null. */
function uuidOrNull(raw: Raw, field: string, i: number, p: Problems): string | null | undefined {
  const v = raw[field];
  if (v === null || v === undefined) return v;
  if (typeof v !== "string" || !UUID_RE.test(v)) {
    fail(p, i, field, "must be a UUID or null");
    return undefined;
  }
  return v.toLowerCase();
}

const READERS = {
  requiredString,
  optionalText,
  createdAt,
  uuidOrNull,
  integer,
  usd,
  millis,
  flag,
  classificationsOf,
};

/** The reader call of field number k of GENERATION_FIELDS (as source text; F = the table). */
function readerCall(f: GenerationField, k: number): string {
  const w = JSON.stringify(f.wire);
  const c = f.check;
  switch (c.type) {
    case "text":
      if (!f.required) return `optionalText(raw, ${w}, i, p, F[${k}])`;
      return c.pattern
        ? `requiredString(raw, ${w}, ${c.max}, i, p, F[${k}].check.pattern.re, F[${k}].check.pattern.message)`
        : `requiredString(raw, ${w}, ${c.max}, i, p)`;
    case "timestamp":
      return `createdAt(raw, ${w}, i, nowMs, p)`;
    case "uuid":
      return `uuidOrNull(raw, ${w}, i, p)`;
    case "integer":
      return `integer(raw, ${w}, ${f.required}, ${c.min}, ${f.absent === "zero" ? 0 : null}, i, p)`;
    case "usd":
      return `usd(raw, ${w}, ${f.required}, ${c.signed}, i, p)`;
    case "millis":
      return f.required ? `millis(raw, ${w}, true, i, p) ?? 0` : `millis(raw, ${w}, false, i, p)`;
    case "flag":
      return `flag(raw, ${w}, i, p)`;
    case "classifications":
      return `classificationsOf(raw, ${w}, i, p)`;
  }
}

/**
 * The record reader, compiled once from the field table into one function that calls each
 * field's reader with its constants and returns an object literal of fixed shape: what the
 * hand-written reader was, so the hot path keeps its speed (a loop over the table with keyed
 * reads and writes ran at half the speed). Only the table's own names and numbers go into the
 * source; they are checked to be plain identifiers first.
 */
type RecordReader = (raw: Raw, i: number, nowMs: number, p: Problems) => ParsedRecord;

const readFields = ((): RecordReader => {
  const lines: string[] = [];
  const props: string[] = ["index: i"];
  GENERATION_FIELDS.forEach((f, k) => {
    const key = parsedKeyOf(f);
    if (!/^[a-z_]+$/.test(f.wire) || !/^[a-zA-Z]+$/.test(key))
      throw new Error(`field table: bad name ${f.wire}`);
    lines.push(`const v${k} = ${readerCall(f, k)};`);
    props.push(`${key}: v${k}`);
  });
  const names = Object.keys(READERS);
  const source = `return function readFields(raw, i, nowMs, p) {\n${lines.join("\n")}\nreturn { ${props.join(", ")} };\n}`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- compiled from the static field table (see above)
  const make = new Function("F", ...names, source) as (...args: unknown[]) => RecordReader;
  return make(GENERATION_FIELDS, ...names.map((n) => READERS[n as keyof typeof READERS]));
})();
