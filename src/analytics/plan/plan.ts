import type { DimensionDef } from "../model/dimensions.js";
import type { GranularityDef } from "../model/granularities.js";
import type { MetricDef } from "../model/metrics.js";
import type { OperatorName } from "../model/operators.js";

/** A validated query: everything the compiler and the reference evaluator need, nothing textual. */
export interface Plan {
  /** Half-open window [startMs, endMs) over created_at. */
  startMs: number;
  endMs: number;
  /** Requested metrics in order, then a hidden request_count when only order_by names it. */
  metrics: readonly PlanMetric[];
  dimensions: readonly DimensionDef[];
  granularity: GranularityDef | null;
  /** ANDed. After resolution (service) api_key_id values are numeric ids. */
  filters: readonly PlanFilter[];
  /** A filter value resolved to nothing (eq on an unknown key hash): the query matches no rows. */
  matchesNothing: boolean;
  classifier: ClassifierGrouping | null;
  classifierFilters: ClassifierFilterSet | null;
  /** The complete sort chain; it ends in a unique key, so results are deterministic. */
  order: readonly SortKey[];
  /** Rows returned at most. */
  limit: number;
  /** Rows kept per combination of dimensions (explicit group_limit that can cut), or null. */
  groupLimit: number | null;
  /** Time series with dimensions and no group_limit: limit raised to the maximum, buckets kept whole. */
  autoLimit: boolean;
}

export interface PlanMetric {
  def: MetricDef;
  /** Computed for ordering only; not returned. */
  hidden: boolean;
}

export interface PlanFilter {
  dimension: DimensionDef;
  operator: OperatorName;
  /** One value for scalar operators; 1..n for in / not_in. */
  values: readonly (string | number)[];
  includeUnset: boolean;
}

export interface ClassifierGrouping {
  classifierId: string;
  /** Tag dimension names, each its own column; null = one row per (dimension_name, value) pair. */
  names: readonly string[] | null;
  includeNulls: boolean;
}

export type ClassifierOperator = "eq" | "neq" | "in" | "not_in";

export interface ClassifierFilterSet {
  classifierId: string;
  filters: readonly { name: string; operator: ClassifierOperator; values: readonly string[] }[];
}

/** A result column of the plan (aliases come from output-columns.ts). */
export type ColumnRef =
  | { kind: "metric"; index: number }
  | { kind: "dimension"; index: number }
  | { kind: "time" }
  | { kind: "classifier"; index: number };

export interface SortKey {
  column: ColumnRef;
  direction: "asc" | "desc";
}
