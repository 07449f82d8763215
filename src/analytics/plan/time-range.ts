import { invalid } from "../../domain/errors.js";
import { UTC_SECONDS_RE, parseTimestamp } from "../../lib/time.js";
import { LIMITS } from "../model/limits.js";
import type { QueryRequest } from "./query-request.js";

const FORMAT = "must be a UTC timestamp with seconds (YYYY-MM-DDTHH:MM:SSZ, fractional seconds allowed)";

function parse(field: string, s: string): number {
  const d = UTC_SECONDS_RE.test(s) ? parseTimestamp(s) : null;
  if (!d) throw invalid(`time_range.${field}: ${FORMAT}`);
  return d.getTime();
}

/** The half-open window [start, end); default: the 7 days ending now. */
export function planTimeRange(
  range: QueryRequest["time_range"],
  now: Date,
): { startMs: number; endMs: number } {
  if (!range) return { startMs: now.getTime() - LIMITS.defaultRangeMs, endMs: now.getTime() };
  const startMs = parse("start", range.start);
  const endMs = parse("end", range.end);
  if (endMs <= startMs) throw invalid("time_range.end: must be after time_range.start");
  return { startMs, endMs };
}
