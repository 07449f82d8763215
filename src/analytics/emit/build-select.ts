import { aliasOf, planColumns } from "../plan/columns.js";
import type { ColumnRef, Plan } from "../plan/plan.js";
import {
  classifierFilterExprs,
  dimensionExpr,
  filterExpr,
  tagWhere,
  type CompileContext,
} from "./build-filters.js";
import { feedbackJoin } from "./build-feedback-join.js";
import { measureExpr } from "./build-measure.js";
import { ParamBag } from "./params.js";
import type { Expr, Join, OrderItem, Select, SelectItem, TableAlias } from "./tree.js";

export interface QueryTree {
  select: Select;
  params: Record<string, string | number>;
}

/** Column aliases of the group-limit layers; they cannot clash with model aliases (m_, d_, c_, t_). */
export const ROW_NUMBER_ALIAS = "x_rn";
export const GROUP_SIZE_ALIAS = "x_n";
export const GROUP_MAX_ALIAS = "x_group_max";

const ref = (alias: string): Expr => ({ t: "ref", alias });

/**
 * Plan → SQL tree: one aggregate SELECT over generations (aliased g) with classifier tag joins and
 * the feedback join, then, for an effective group_limit, a ranking layer and a filtering layer.
 */
export function buildSelect(plan: Plan, ctx: CompileContext): QueryTree {
  const params = new ParamBag();
  const g = (column: "organization_id" | "created_at"): Expr => ({ t: "col", table: "g", column });
  const start = params.time(plan.startMs);
  const end = params.time(plan.endMs);
  const window = (table: "g" | "t" | "fb"): Expr[] => [
    { t: "cmp", op: ">=", left: { t: "col", table, column: "created_at" }, right: start },
    { t: "cmp", op: "<", left: { t: "col", table, column: "created_at" }, right: end },
  ];

  const joins: Join[] = [];
  const classifierCols: Expr[] = [];
  const c = plan.classifier;
  if (c) {
    const kind = c.includeNulls ? "left" : "inner";
    // Tag columns may be NULL on the unmatched side of a LEFT JOIN (include_nulls).
    const tagCol = (column: "dimension_name" | "value"): SelectItem => ({
      expr: { t: "nullable", arg: { t: "col", table: "t", column } },
      alias: column,
    });
    const tagSub = (name: string | null): Select => ({
      distinct: true,
      items: [
        { expr: { t: "col", table: "t", column: "generation_id" }, alias: "generation_id" },
        ...(name === null ? [tagCol("dimension_name")] : []),
        tagCol("value"),
      ],
      from: { t: "table", name: "generation_tags", alias: "t" },
      where: {
        t: "and",
        args: [
          ...tagWhere(c.classifierId, ctx, params, window("t")),
          ...(name === null
            ? []
            : [
                {
                  t: "cmp",
                  op: "=",
                  left: { t: "col", table: "t", column: "dimension_name" },
                  right: params.add(name, "String"),
                } as Expr,
              ]),
        ],
      },
    });
    const join = (alias: TableAlias, name: string | null) =>
      joins.push({
        kind,
        source: { t: "subquery", select: tagSub(name), alias },
        on: {
          t: "cmp",
          op: "=",
          left: { t: "col", table: alias, column: "generation_id" },
          right: { t: "col", table: "g", column: "id" },
        },
      });
    if (c.names) {
      c.names.forEach((name, i) => {
        join(`t${i}`, name);
        classifierCols.push({ t: "col", table: `t${i}`, column: "value" });
      });
    } else {
      join("t0", null);
      classifierCols.push(
        { t: "col", table: "t0", column: "dimension_name" },
        { t: "col", table: "t0", column: "value" },
      );
    }
  }

  const feedback = feedbackJoin(plan, ctx, params, window("fb"));
  if (feedback) joins.push(feedback);

  const where: Expr[] = [
    { t: "cmp", op: "=", left: g("organization_id"), right: params.add(ctx.organizationId, "String") },
    ...window("g"),
    ...plan.filters.map((f) => filterExpr(f, ctx, params)),
    ...(plan.classifierFilters
      ? classifierFilterExprs(plan.classifierFilters, ctx, params, () => window("t"))
      : []),
    ...(plan.matchesNothing ? [{ t: "bool", value: false } as Expr] : []),
  ];

  const exprOf = (r: ColumnRef): Expr => {
    switch (r.kind) {
      case "dimension":
        return dimensionExpr(plan.dimensions[r.index]!, ctx, params);
      case "time":
        return { t: "bucket", unit: plan.granularity!.name, arg: g("created_at") };
      case "classifier":
        return classifierCols[r.index]!;
      case "metric":
        return measureExpr(plan.metrics[r.index]!.def.measure);
    }
  };
  const columns = planColumns(plan);
  const items = columns.map((col) => ({ expr: exprOf(col.ref), alias: col.alias }));
  const groupBy = columns.filter((col) => col.ref.kind !== "metric").map((col) => ref(col.alias));
  const order: OrderItem[] = plan.order.map((k) => ({
    expr: ref(aliasOf(plan, k.column)),
    direction: k.direction,
  }));
  // One row more than returned tells whether more rows existed (truncated).
  const limit = params.add(plan.limit + 1, "Int64");

  const aggregate: Select = {
    items,
    from: { t: "table", name: "generations", alias: "g" },
    joins,
    where: { t: "and", args: where },
    groupBy,
  };
  if (plan.groupLimit === null) {
    return { select: { ...aggregate, orderBy: order, limit }, params: params.values };
  }

  const partition = plan.dimensions.map((_, index) => ref(aliasOf(plan, { kind: "dimension", index })));
  const outer = columns.map((col) => ({ expr: ref(col.alias), alias: col.alias }));
  const ranked: Select = {
    items: [
      ...outer,
      { expr: { t: "row_number", partition, order }, alias: ROW_NUMBER_ALIAS },
      { expr: { t: "count_over", partition }, alias: GROUP_SIZE_ALIAS },
    ],
    from: { t: "subquery", select: aggregate, alias: "a" },
  };
  return {
    select: {
      items: [...outer, { expr: { t: "max_over", arg: ref(GROUP_SIZE_ALIAS) }, alias: GROUP_MAX_ALIAS }],
      from: { t: "subquery", select: ranked, alias: "r" },
      where: { t: "cmp", op: "<=", left: ref(ROW_NUMBER_ALIAS), right: params.add(plan.groupLimit, "Int64") },
      orderBy: order,
      limit,
    },
    params: params.values,
  };
}
