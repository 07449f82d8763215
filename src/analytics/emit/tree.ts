import type { FeedbackCategory } from "../../activity/feedback-row.js";
import type { FlagColumn, FloatColumn, GenerationColumn, SumColumn } from "../model/columns.js";

/**
 * The SQL tree the compiler builds and the dialect emitters print. Identifiers in it are typed
 * unions from the model (columns, tables, aliases built from model names); every request value is
 * a Param node, printed as a placeholder and bound by the store.
 */
export type ParamType = "String" | "Int64";

export type Expr =
  | { t: "col"; table: TableAlias; column: GenerationColumn | TagColumn | FeedbackColumn }
  | { t: "ref"; alias: string }
  | { t: "param"; name: string; type: ParamType }
  | { t: "time_param"; name: string }
  | { t: "bool"; value: boolean }
  | { t: "cmp"; op: "=" | "<>" | ">" | ">=" | "<" | "<="; left: Expr; right: Expr }
  | { t: "and" | "or"; args: readonly Expr[] }
  | { t: "not"; arg: Expr }
  | { t: "is_null"; arg: Expr; negated: boolean }
  | { t: "in_list"; arg: Expr; list: readonly Expr[]; negated: boolean }
  | { t: "in_select"; arg: Expr; select: Select; negated: boolean }
  | { t: "coalesce"; args: readonly Expr[] }
  | { t: "nullable"; arg: Expr }
  | { t: "bucket"; unit: "minute" | "hour" | "day" | "week" | "month"; arg: Expr }
  | { t: "count"; where: Expr | null }
  | { t: "sum"; columns: readonly Expr[]; where: Expr | null }
  | { t: "avg"; arg: Expr }
  | { t: "quantile"; q: number; arg: Expr }
  | { t: "ratio"; num: Expr; den: Expr; divideBy: number }
  | { t: "row_number"; partition: readonly Expr[]; order: readonly OrderItem[] }
  | { t: "count_over"; partition: readonly Expr[] }
  | { t: "max_over"; arg: Expr };

export type TableAlias = "g" | "t" | `t${number}` | "a" | "r" | "f" | "fb";
export type TableName = "generations" | "generation_tags" | "generation_feedback";
export type TagColumn = "generation_id" | "classifier_id" | "dimension_name" | "value";
/** Columns of `generation_feedback`, and the per-generation counts the feedback join computes. */
export type FeedbackColumn = "feedback_id" | "category" | FeedbackCountColumn;
export type FeedbackCountColumn = `n_${FeedbackCategory | "all"}`;

export interface OrderItem {
  expr: Expr;
  direction: "asc" | "desc";
}

export interface SelectItem {
  expr: Expr;
  alias: string;
}

export type Source =
  { t: "table"; name: TableName; alias: TableAlias } | { t: "subquery"; select: Select; alias: TableAlias };

export interface Join {
  kind: "inner" | "left";
  source: Source;
  on: Expr;
}

export interface Select {
  distinct?: boolean;
  items: readonly SelectItem[];
  from: Source;
  joins?: readonly Join[];
  where?: Expr | null;
  groupBy?: readonly Expr[];
  orderBy?: readonly OrderItem[];
  /** A bound integer (Int64 param) or null. */
  limit?: Expr | null;
}

/** Columns used in the tree, re-exported for the builder. */
export type { FlagColumn, FloatColumn, SumColumn };
