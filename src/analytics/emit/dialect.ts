import type { AnalyticsDialect } from "../../stores/activity-store.js";
import type { ParamType } from "./tree.js";

/**
 * What differs between the analytics engines (Cube-style thin dialects): placeholders, time
 * functions and aggregate spellings. Everything else is printed by print-sql.ts.
 */
export interface SqlDialect {
  name: AnalyticsDialect;
  param(name: string, type: ParamType): string;
  /** A timestamp from a bound epoch-milliseconds value. */
  timeParam(name: string): string;
  /** Epoch milliseconds of the start of the bucket holding a timestamp; weeks start on Monday. */
  bucket(unit: "minute" | "hour" | "day" | "week" | "month", arg: string): string;
  /** count over the group, of rows where `where` holds when given; 0 over nothing. */
  count(where: string | null): string;
  /** Integer sum (where `where` holds when given); 0 over nothing. */
  sum(arg: string, where: string | null): string;
  /** Mean of non-null values; null over nothing. */
  avg(arg: string): string;
  /** Exact quantile with linear interpolation; null over nothing. */
  quantile(q: number, arg: string): string;
  toDouble(arg: string): string;
  /**
   * A value that may be NULL when it comes from the unmatched side of a LEFT JOIN (ClickHouse
   * fills unmatched non-Nullable columns with defaults; adapters own SETTINGS, so no join_use_nulls).
   */
  nullable(arg: string): string;
}
