import type { DimensionDef } from "../model/dimensions.js";
import type { ClassifierFilterSet, PlanFilter } from "../plan/plan.js";
import type { ParamBag } from "./params.js";
import type { Expr, Select } from "./tree.js";

export interface CompileContext {
  organizationId: string;
  /** Legacy activity (workspace_id null) belongs to this workspace; null when the organization has none. */
  defaultWorkspaceId: string | null;
}

/** The value a dimension groups and filters on; workspace maps null to the default workspace. */
export function dimensionExpr(dim: DimensionDef, ctx: CompileContext, params: ParamBag): Expr {
  const column: Expr = { t: "col", table: "g", column: dim.column };
  if (dim.null_is_default_workspace && ctx.defaultWorkspaceId !== null) {
    return { t: "coalesce", args: [column, params.add(ctx.defaultWorkspaceId, "String")] };
  }
  return column;
}

const CMP = { eq: "=", neq: "<>", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

/** One ordinary filter. Comparisons never match unset rows; include_unset adds them to in / not_in. */
export function filterExpr(f: PlanFilter, ctx: CompileContext, params: ParamBag): Expr {
  const arg = dimensionExpr(f.dimension, ctx, params);
  const type = f.dimension.value_type === "integer" ? "Int64" : "String";
  const bind = (v: string | number) => params.add(v, type);
  if (f.operator === "in" || f.operator === "not_in") {
    const test: Expr = { t: "in_list", arg, list: f.values.map(bind), negated: f.operator === "not_in" };
    const known: Expr =
      f.operator === "not_in" ? { t: "and", args: [test, { t: "is_null", arg, negated: true }] } : test;
    return f.includeUnset ? { t: "or", args: [known, { t: "is_null", arg, negated: false }] } : known;
  }
  return { t: "cmp", op: CMP[f.operator], left: arg, right: bind(f.values[0]!) };
}

/** Tags of one classifier in the organization and window (the subqueries classifier features use). */
export function tagWhere(
  classifierId: string,
  ctx: CompileContext,
  params: ParamBag,
  window: Expr[],
): Expr[] {
  const t = (column: "organization_id" | "classifier_id"): Expr => ({ t: "col", table: "t", column });
  return [
    { t: "cmp", op: "=", left: t("organization_id"), right: params.add(ctx.organizationId, "String") },
    { t: "cmp", op: "=", left: t("classifier_id"), right: params.add(classifierId, "String") },
    ...window,
  ];
}

/**
 * classifier_filters: eq / in keep generations with a tag of that name whose value is listed;
 * neq / not_in keep generations with a tag of that name and none of the listed values.
 */
export function classifierFilterExprs(
  set: ClassifierFilterSet,
  ctx: CompileContext,
  params: ParamBag,
  tagWindow: () => Expr[],
): Expr[] {
  const id: Expr = { t: "col", table: "g", column: "id" };
  const genIds = (where: Expr[]): Select => ({
    items: [{ expr: { t: "col", table: "t", column: "generation_id" }, alias: "generation_id" }],
    from: { t: "table", name: "generation_tags", alias: "t" },
    where: { t: "and", args: where },
  });
  return set.filters.flatMap((f): Expr[] => {
    const named: Expr = {
      t: "cmp",
      op: "=",
      left: { t: "col", table: "t", column: "dimension_name" },
      right: params.add(f.name, "String"),
    };
    const base = () => [...tagWhere(set.classifierId, ctx, params, tagWindow()), named];
    const valueIn = (): Expr => ({
      t: "in_list",
      arg: { t: "col", table: "t", column: "value" },
      list: f.values.map((v) => params.add(v, "String")),
      negated: false,
    });
    if (f.operator === "eq" || f.operator === "in") {
      return [{ t: "in_select", arg: id, select: genIds([...base(), valueIn()]), negated: false }];
    }
    return [
      { t: "in_select", arg: id, select: genIds(base()), negated: false },
      { t: "in_select", arg: id, select: genIds([...base(), valueIn()]), negated: true },
    ];
  });
}
