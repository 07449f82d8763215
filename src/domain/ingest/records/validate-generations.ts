import { UUID_RE, HASH_RE } from "../../../lib/ids.js";
import { MAX_USD, usdToNano } from "../../../lib/money.js";
import { parseTimestamp } from "../../../lib/time.js";

/** Records per request (spec/activity.md); more is 413. */
export const MAX_RECORDS = 10_000;
/** Problems listed in error.metadata.problems. */
export const MAX_PROBLEMS = 100;
/** Classifier tags per record. */
export const MAX_CLASSIFICATIONS = 100;
const MAX_TEXT = 1024;
/** Records may not claim to start later than this after "now" (clock skew allowance). */
export const MAX_FUTURE_MS = 24 * 3_600_000;
const MIN_CREATED_AT_MS = Date.UTC(2000, 0, 1);

/** A line of an NDJSON body that is not JSON (reported as a problem of that record). */
export class UnparsableLine {
  constructor(readonly line: number) {}
}

export interface Classification {
  classifier_id: string;
  dimension_name: string;
  value: string;
}

/** A record whose shape is valid; key and workspace references are resolved afterwards. */
export interface ParsedRecord {
  index: number;
  id: string;
  createdAtMs: number;
  apiKeyHash: string;
  /** undefined: omitted (the key's workspace); null: legacy activity. */
  workspaceId: string | null | undefined;
  model: string;
  provider: string;
  variant: string | null;
  appId: number | null;
  appTitle: string | null;
  /** undefined: omitted (the key's creator). */
  userId: string | null | undefined;
  userName: string | null;
  userEmail: string | null;
  externalUser: string | null;
  origin: string | null;
  country: string | null;
  finishReason: string | null;
  tokensPrompt: number;
  tokensCompletion: number;
  tokensReasoning: number;
  tokensCached: number;
  isByok: boolean;
  streamed: boolean;
  cancelled: boolean;
  responseCached: boolean;
  guardrailInvoked: boolean;
  usageNano: bigint;
  byokUsageInferenceNano: bigint;
  usageUpstreamNano: bigint;
  usageCacheNano: bigint;
  usageDataNano: bigint;
  usageWebNano: bigint;
  usageUpstreamWebNano: bigint;
  usageFileNano: bigint;
  usageUpstreamFileNano: bigint;
  usageWebFetchNano: bigint;
  usageUpstreamWebFetchNano: bigint;
  latencyMs: number;
  generationTimeMs: number | null;
  classifications: Classification[];
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
const MODEL_RE = /^[^\s/]+\/\S+$/;
const COUNTRY_RE = /^[A-Za-z]{2}$/;
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
function optionalString(
  raw: Raw,
  field: string,
  i: number,
  problems: Problems,
  max = MAX_TEXT,
): string | null {
  const v = raw[field];
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string") fail(problems, i, field, "must be a string or null");
  else if (v.length > max) fail(problems, i, field, `at most ${max} characters`);
  else if (CONTROL_RE.test(v)) fail(problems, i, field, "must not contain control characters");
  else return v;
  return null;
}

function count(raw: Raw, field: string, required: boolean, i: number, problems: Problems): number {
  const v = raw[field];
  if (v === undefined || v === null) {
    if (required) fail(problems, i, field, "is required");
    return 0;
  }
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    fail(problems, i, field, "must be an integer >= 0");
    return 0;
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
function createdAt(raw: Raw, i: number, nowMs: number, problems: Problems): number {
  const c = raw.created_at;
  if (c === undefined || c === null) {
    fail(problems, i, "created_at", "is required");
    return 0;
  }
  let ms = typeof c === "string" ? fastUtcMs(c) : NaN;
  if (Number.isNaN(ms)) {
    const d = typeof c === "string" ? parseTimestamp(c) : null;
    if (!d) {
      fail(
        problems,
        i,
        "created_at",
        "must be an RFC 3339 timestamp with seconds and an offset (2026-11-18T12:00:00Z)",
      );
      return 0;
    }
    ms = d.getTime();
  }
  if (ms < MIN_CREATED_AT_MS) fail(problems, i, "created_at", "must not be before 2000-01-01T00:00:00Z");
  else if (ms > nowMs + MAX_FUTURE_MS)
    fail(problems, i, "created_at", "must not be more than 24 hours in the future");
  else return ms;
  return 0;
}

function classificationsOf(raw: Raw, i: number, problems: Problems): Classification[] {
  const out: Classification[] = [];
  const cl = raw.classifications;
  if (cl === undefined || cl === null) return out;
  if (!Array.isArray(cl)) {
    fail(problems, i, "classifications", "must be an array");
    return out;
  }
  if (cl.length > MAX_CLASSIFICATIONS) {
    fail(problems, i, "classifications", `at most ${MAX_CLASSIFICATIONS} items`);
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
 * Checks the shape of every record (spec/activity.md) and normalises it: money to nano-USD,
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
  const before = problems.total;
  const p = problems;

  // Field by field in wire order, so that a record's problems are listed in that order.
  const id = requiredString(raw, "id", 128, i, p);
  const createdAtMs = createdAt(raw, i, nowMs, p);
  const apiKeyHash = requiredString(
    raw,
    "api_key_hash",
    64,
    i,
    p,
    HASH_RE,
    "must be 64 lowercase hex characters",
  );

  let workspaceId: string | null | undefined;
  const w = raw.workspace_id;
  if (w === null) workspaceId = null;
  else if (w !== undefined) {
    if (typeof w !== "string" || !UUID_RE.test(w)) fail(p, i, "workspace_id", "must be a UUID or null");
    else workspaceId = w.toLowerCase();
  }

  const model = requiredString(raw, "model", 256, i, p, MODEL_RE, "must be a provider/model permaslug");
  const provider = requiredString(raw, "provider", 256, i, p);
  const variant = optionalString(raw, "variant", i, p, 256);

  let appId: number | null = null;
  const a = raw.app_id;
  if (a !== undefined && a !== null) {
    if (typeof a !== "number" || !Number.isSafeInteger(a) || a < 1)
      fail(p, i, "app_id", "must be an integer >= 1");
    else appId = a;
  }
  const appTitle = optionalString(raw, "app_title", i, p);

  let userId: string | null | undefined;
  if (raw.user_id !== undefined && raw.user_id !== null && raw.user_id !== "")
    userId = optionalString(raw, "user_id", i, p);
  const userName = optionalString(raw, "user_name", i, p);
  const userEmail = optionalString(raw, "user_email", i, p);
  const externalUser = optionalString(raw, "external_user", i, p);
  const origin = optionalString(raw, "origin", i, p);
  let country = optionalString(raw, "country", i, p, 2);
  if (country !== null) {
    if (!COUNTRY_RE.test(country)) {
      fail(p, i, "country", "must be an ISO 3166-1 alpha-2 code");
      country = null;
    } else country = country.toUpperCase();
  }
  const finishReason = optionalString(raw, "finish_reason", i, p, 64);

  const tokensPrompt = count(raw, "tokens_prompt", true, i, p);
  const tokensCompletion = count(raw, "tokens_completion", true, i, p);
  const tokensReasoning = count(raw, "tokens_reasoning", false, i, p);
  const tokensCached = count(raw, "tokens_cached", false, i, p);

  const isByok = flag(raw, "is_byok", i, p);
  const usageNano = usd(raw, "usage", true, false, i, p);
  const byokUsageInferenceNano = usd(raw, "byok_usage_inference", false, false, i, p);
  const usageUpstreamNano = usd(raw, "usage_upstream", false, false, i, p);
  const usageCacheNano = usd(raw, "usage_cache", false, false, i, p);
  const usageWebNano = usd(raw, "usage_web", false, false, i, p);
  const usageUpstreamWebNano = usd(raw, "usage_upstream_web", false, false, i, p);
  const usageFileNano = usd(raw, "usage_file", false, false, i, p);
  const usageUpstreamFileNano = usd(raw, "usage_upstream_file", false, false, i, p);
  const usageWebFetchNano = usd(raw, "usage_web_fetch", false, false, i, p);
  const usageUpstreamWebFetchNano = usd(raw, "usage_upstream_web_fetch", false, false, i, p);
  const usageDataNano = usd(raw, "usage_data", false, true, i, p);

  const latencyMs = millis(raw, "latency_ms", true, i, p) ?? 0;
  const generationTimeMs = millis(raw, "generation_time_ms", false, i, p);

  const streamed = flag(raw, "streamed", i, p);
  const cancelled = flag(raw, "cancelled", i, p);
  const responseCached = flag(raw, "response_cached", i, p);
  const guardrailInvoked = flag(raw, "guardrail_invoked", i, p);

  const classifications = classificationsOf(raw, i, p);

  if (problems.total !== before) return null;
  return {
    index: i,
    id,
    createdAtMs,
    apiKeyHash,
    workspaceId,
    model,
    provider,
    variant,
    appId,
    appTitle,
    userId,
    userName,
    userEmail,
    externalUser,
    origin,
    country,
    finishReason,
    tokensPrompt,
    tokensCompletion,
    tokensReasoning,
    tokensCached,
    isByok,
    streamed,
    cancelled,
    responseCached,
    guardrailInvoked,
    usageNano,
    byokUsageInferenceNano,
    usageUpstreamNano,
    usageCacheNano,
    usageDataNano,
    usageWebNano,
    usageUpstreamWebNano,
    usageFileNano,
    usageUpstreamFileNano,
    usageWebFetchNano,
    usageUpstreamWebFetchNano,
    latencyMs,
    generationTimeMs,
    classifications,
  };
}
