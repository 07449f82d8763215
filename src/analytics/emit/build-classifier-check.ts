import type { Plan } from "../plan/plan.js";
import type { CompileContext } from "./build-filters.js";
import { tagWhere } from "./build-filters.js";
import { ParamBag } from "./params.js";
import type { QueryTree } from "./build-select.js";
import type { Expr } from "./tree.js";

/**
 * Whether the plan's classifier is active: it has tagged at least one generation of the
 * organization (any time) — on one of the filtered workspaces when the query filters workspace
 * with eq or in. One row when active, none otherwise.
 */
export function buildClassifierCheck(plan: Plan, ctx: CompileContext): QueryTree | null {
  const id = plan.classifier?.classifierId ?? plan.classifierFilters?.classifierId;
  if (id === undefined) return null;
  const params = new ParamBag();
  const scope: Expr[] = [];
  for (const f of plan.filters) {
    if (f.dimension.name !== "workspace" || (f.operator !== "eq" && f.operator !== "in")) continue;
    const ws: Expr = { t: "col", table: "t", column: "workspace_id" };
    const arg: Expr =
      ctx.defaultWorkspaceId === null
        ? ws
        : { t: "coalesce", args: [ws, params.add(ctx.defaultWorkspaceId, "String")] };
    scope.push({ t: "in_list", arg, list: f.values.map((v) => params.add(v, "String")), negated: false });
  }
  return {
    select: {
      items: [{ expr: { t: "bool", value: true }, alias: "active" }],
      from: { t: "table", name: "generation_tags", alias: "t" },
      where: { t: "and", args: [...tagWhere(id, ctx, params, []), ...scope] },
      limit: params.add(1, "Int64"),
    },
    params: params.values,
  };
}
