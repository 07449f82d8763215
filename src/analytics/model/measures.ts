import type { FeedbackCategory } from "../../activity/feedback-row.js";
import type { FlagColumn, FloatColumn, SumColumn } from "./columns.js";

/**
 * How a metric aggregates the selected generations, as data. The SQL emitters and the reference
 * evaluator both interpret these nodes; neither knows metric names.
 *
 * - count: number of generations (where `flag` is true when given) — 0 over nothing.
 * - sum: exact integer sum of the columns added per generation (where `flag` is true when given) — 0 over nothing.
 * - avg / quantile: over the non-null values of a float column — null over nothing. Quantiles are exact
 *   with linear interpolation between closest ranks.
 * - ratio: num / den as doubles, then divided by `divideBy` (1 when absent) — null when den is 0.
 * - feedback: the number of feedback submissions on the generations (of `category` when given; all
 *   when null), from the activity store's `generation_feedback` — 0 over nothing.
 */
export type Measure =
  | { kind: "count"; flag?: Flag }
  | { kind: "sum"; columns: readonly SumColumn[]; flag?: Flag }
  | { kind: "avg"; column: FloatColumn }
  | { kind: "quantile"; column: FloatColumn; q: number }
  | { kind: "ratio"; num: CountOrSum; den: CountOrSum; divideBy?: number }
  | { kind: "feedback"; category: FeedbackCategory | null };

export type CountOrSum = Extract<Measure, { kind: "count" | "sum" }>;

/** A boolean column that must equal `value`. */
export interface Flag {
  column: FlagColumn;
  value: boolean;
}

export const count = (flag?: Flag): CountOrSum => (flag ? { kind: "count", flag } : { kind: "count" });
export const sum = (columns: readonly SumColumn[], flag?: Flag): CountOrSum =>
  flag ? { kind: "sum", columns, flag } : { kind: "sum", columns };
export const flag = (column: FlagColumn, value = true): Flag => ({ column, value });
export const feedback = (category: FeedbackCategory | null = null): Measure => ({
  kind: "feedback",
  category,
});
