import { UUID_RE, HASH_RE } from "../../lib/ids.js";
import { MAX_USD, usdToNano } from "../../lib/money.js";
import { parseTimestamp } from "../../lib/time.js";

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

const USAGE_FIELDS = [
  ["usage_upstream", "usageUpstreamNano"],
  ["usage_cache", "usageCacheNano"],
  ["usage_web", "usageWebNano"],
  ["usage_upstream_web", "usageUpstreamWebNano"],
  ["usage_file", "usageFileNano"],
  ["usage_upstream_file", "usageUpstreamFileNano"],
  ["usage_web_fetch", "usageWebFetchNano"],
  ["usage_upstream_web_fetch", "usageUpstreamWebFetchNano"],
] as const;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

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
  const at = `generations[${i}]`;
  if (raw instanceof UnparsableLine) {
    problems.add(i, `${at}: is not valid JSON (line ${raw.line})`);
    return null;
  }
  if (!isObject(raw)) {
    problems.add(i, `${at}: must be an object`);
    return null;
  }
  const before = problems.total;
  const fail = (field: string, msg: string) => problems.add(i, `${at}.${field}: ${msg}`);

  const requiredString = (field: string, max: number, re?: RegExp, reMsg?: string): string => {
    const v = raw[field];
    if (v === undefined || v === null) fail(field, "is required");
    else if (typeof v !== "string") fail(field, "must be a string");
    else if (v.length < 1 || v.length > max) fail(field, `must be a string of 1 to ${max} characters`);
    else if (CONTROL_RE.test(v)) fail(field, "must not contain control characters");
    else if (re && !re.test(v)) fail(field, reMsg ?? `must match ${String(re)}`);
    else return v;
    return "";
  };
  /** Optional text: omitted, null or "" → null. */
  const optionalString = (field: string, max = MAX_TEXT): string | null => {
    const v = raw[field];
    if (v === undefined || v === null || v === "") return null;
    if (typeof v !== "string") fail(field, "must be a string or null");
    else if (v.length > max) fail(field, `at most ${max} characters`);
    else if (CONTROL_RE.test(v)) fail(field, "must not contain control characters");
    else return v;
    return null;
  };
  const count = (field: string, required: boolean): number => {
    const v = raw[field];
    if (v === undefined || v === null) {
      if (required) fail(field, "is required");
      return 0;
    }
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
      fail(field, "must be an integer >= 0");
      return 0;
    }
    return v;
  };
  const usd = (field: string, required: boolean, allowNegative = false): bigint => {
    const v = raw[field];
    if (v === undefined || v === null) {
      if (required) fail(field, "is required");
      return 0n;
    }
    if (typeof v !== "number" || !Number.isFinite(v) || (!allowNegative && v < 0)) {
      fail(field, allowNegative ? "must be a number" : "must be a number >= 0");
      return 0n;
    }
    if (Math.abs(v) > MAX_USD) {
      fail(field, `must be at most ${MAX_USD} in absolute value`);
      return 0n;
    }
    return usdToNano(v);
  };
  const flag = (field: string): boolean => {
    const v = raw[field];
    if (v === undefined || v === null) return false;
    if (typeof v !== "boolean") {
      fail(field, "must be a boolean");
      return false;
    }
    return v;
  };
  const millis = (field: string, required: boolean): number | null => {
    const v = raw[field];
    if (v === undefined || v === null) {
      if (required) fail(field, "is required");
      return null;
    }
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      fail(field, "must be a number >= 0");
      return null;
    }
    return v;
  };

  const id = requiredString("id", 128);

  let createdAtMs = 0;
  const c = raw.created_at;
  if (c === undefined || c === null) fail("created_at", "is required");
  else {
    const d = typeof c === "string" ? parseTimestamp(c) : null;
    if (!d)
      fail("created_at", "must be an RFC 3339 timestamp with seconds and an offset (2026-11-18T12:00:00Z)");
    else if (d.getTime() < MIN_CREATED_AT_MS) fail("created_at", "must not be before 2000-01-01T00:00:00Z");
    else if (d.getTime() > nowMs + MAX_FUTURE_MS)
      fail("created_at", "must not be more than 24 hours in the future");
    else createdAtMs = d.getTime();
  }

  const apiKeyHash = requiredString("api_key_hash", 64, HASH_RE, "must be 64 lowercase hex characters");

  let workspaceId: string | null | undefined;
  const w = raw.workspace_id;
  if (w === null) workspaceId = null;
  else if (w !== undefined) {
    if (typeof w !== "string" || !UUID_RE.test(w)) fail("workspace_id", "must be a UUID or null");
    else workspaceId = w.toLowerCase();
  }

  const model = requiredString("model", 256, MODEL_RE, "must be a provider/model permaslug");
  const provider = requiredString("provider", 256);
  const variant = optionalString("variant", 256);

  let appId: number | null = null;
  const a = raw.app_id;
  if (a !== undefined && a !== null) {
    if (typeof a !== "number" || !Number.isSafeInteger(a) || a < 1) fail("app_id", "must be an integer >= 1");
    else appId = a;
  }
  const appTitle = optionalString("app_title");

  let userId: string | null | undefined;
  if (raw.user_id !== undefined && raw.user_id !== null && raw.user_id !== "")
    userId = optionalString("user_id");
  const userName = optionalString("user_name");
  const userEmail = optionalString("user_email");
  const externalUser = optionalString("external_user");
  const origin = optionalString("origin");
  let country = optionalString("country", 2);
  if (country !== null) {
    if (!COUNTRY_RE.test(country)) {
      fail("country", "must be an ISO 3166-1 alpha-2 code");
      country = null;
    } else country = country.toUpperCase();
  }
  const finishReason = optionalString("finish_reason", 64);

  const tokensPrompt = count("tokens_prompt", true);
  const tokensCompletion = count("tokens_completion", true);
  const tokensReasoning = count("tokens_reasoning", false);
  const tokensCached = count("tokens_cached", false);

  const isByok = flag("is_byok");
  const usageNano = usd("usage", true);
  const byokUsageInferenceNano = usd("byok_usage_inference", false);
  const usages = Object.fromEntries(USAGE_FIELDS.map(([wire, key]) => [key, usd(wire, false)])) as Record<
    (typeof USAGE_FIELDS)[number][1],
    bigint
  >;
  const usageDataNano = usd("usage_data", false, true);

  const latencyMs = millis("latency_ms", true) ?? 0;
  const generationTimeMs = millis("generation_time_ms", false);

  const streamed = flag("streamed");
  const cancelled = flag("cancelled");
  const responseCached = flag("response_cached");
  const guardrailInvoked = flag("guardrail_invoked");

  const classifications: Classification[] = [];
  const cl = raw.classifications;
  if (cl !== undefined && cl !== null) {
    if (!Array.isArray(cl)) fail("classifications", "must be an array");
    else if (cl.length > MAX_CLASSIFICATIONS) fail("classifications", `at most ${MAX_CLASSIFICATIONS} items`);
    else {
      cl.forEach((item: unknown, j) => {
        const f = `classifications[${j}]`;
        if (!isObject(item)) {
          fail(f, "must be an object");
          return;
        }
        const { classifier_id: cid, dimension_name: dim, value } = item;
        let ok = true;
        if (typeof cid !== "string" || !UUID_RE.test(cid)) {
          fail(`${f}.classifier_id`, "must be a UUID");
          ok = false;
        }
        if (typeof dim !== "string" || dim.length > 64 || !SNAKE_RE.test(dim)) {
          fail(`${f}.dimension_name`, "must be a snake_case name of at most 64 characters");
          ok = false;
        }
        if (typeof value !== "string" || value.length < 1 || value.length > 256 || CONTROL_RE.test(value)) {
          fail(`${f}.value`, "must be a string of 1 to 256 characters");
          ok = false;
        }
        if (ok) {
          classifications.push({
            classifier_id: (cid as string).toLowerCase(),
            dimension_name: dim as string,
            value: value as string,
          });
        }
      });
    }
  }

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
    usageDataNano,
    ...usages,
    latencyMs,
    generationTimeMs,
    classifications,
  };
}
