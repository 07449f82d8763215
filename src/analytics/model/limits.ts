/** Request limits of POST /analytics/query (docs/wire-compatibility.md "Analytics limits"). */
export const LIMITS = {
  maxDimensions: 2,
  maxFilters: 20,
  maxClassifierDimensionNames: 2,
  maxClassifierFilters: 10,
  defaultLimit: 1000,
  maxLimit: 10_000,
  maxGroupLimit: 10_000,
  defaultRangeMs: 7 * 86_400_000,
  /** Range cap of classifier use (classifier_dimensions or classifier_filters). */
  classifierRangeDays: 31,
} as const;

export const DAY_MS = 86_400_000;

/** Classifier dimension names: snake_case identifiers. */
export const SNAKE_CASE_RE = /^[a-z][a-z0-9_]{0,63}$/;
