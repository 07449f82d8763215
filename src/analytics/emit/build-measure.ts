import type { Flag, Measure } from "../model/measures.js";
import type { Expr } from "./tree.js";

const col = (column: Flag["column"] | Extract<Measure, { kind: "avg" }>["column"]): Expr => ({
  t: "col",
  table: "g",
  column,
});

function flagExpr(flag: Flag | undefined): Expr | null {
  if (!flag) return null;
  return flag.value ? col(flag.column) : { t: "not", arg: col(flag.column) };
}

/** A metric's measure as an aggregate expression over the generations aliased `g`. */
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
  }
}
