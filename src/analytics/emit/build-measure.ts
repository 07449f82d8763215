import type { FeedbackCategory } from "../../activity/feedback-row.js";
import type { Flag, Measure } from "../model/measures.js";
import type { Expr, FeedbackCountColumn } from "./tree.js";

const col = (column: Flag["column"] | Extract<Measure, { kind: "avg" }>["column"]): Expr => ({
  t: "col",
  table: "g",
  column,
});

function flagExpr(flag: Flag | undefined): Expr | null {
  if (!flag) return null;
  return flag.value ? col(flag.column) : { t: "not", arg: col(flag.column) };
}

/** The feedback join's column counting a generation's feedback (of a category, or all). */
export const feedbackCountColumn = (category: FeedbackCategory | null): FeedbackCountColumn =>
  `n_${category ?? "all"}`;

/**
 * A metric's measure as an aggregate expression over the generations aliased `g` (and, for
 * feedback, their per-generation feedback counts aliased `f`: build-select.ts joins them).
 */
export function measureExpr(m: Measure): Expr {
  switch (m.kind) {
    case "count":
      return { t: "count", where: flagExpr(m.flag) };
    case "sum":
      return {
        t: "sum",
        columns: m.columns.map((c): Expr => ({ t: "col", table: "g", column: c })),
        where: flagExpr(m.flag),
      };
    case "avg":
      return { t: "avg", arg: col(m.column) };
    case "quantile":
      return { t: "quantile", q: m.q, arg: col(m.column) };
    case "ratio":
      return { t: "ratio", num: measureExpr(m.num), den: measureExpr(m.den), divideBy: m.divideBy ?? 1 };
    case "feedback":
      // A generation without feedback has no row in the join: NULL (DuckDB) or 0 (ClickHouse's
      // default for the unmatched side), which the sum skips or adds as nothing.
      return {
        t: "sum",
        columns: [{ t: "col", table: "f", column: feedbackCountColumn(m.category) }],
        where: null,
      };
  }
}
