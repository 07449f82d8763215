import type { Plan } from "../plan/plan.js";
import type { CompileContext } from "./build-filters.js";
import { feedbackCountColumn } from "./build-measure.js";
import type { ParamBag } from "./params.js";
import type { Expr, Join, SelectItem } from "./tree.js";

/**
 * The feedback metrics' join, when the plan has any: per generation of the organization in the
 * window (feedback rows carry their generation's time), the number of submissions, in all and
 * per category the plan counts. One row per generation, so the join never repeats a generation
 * and every other metric is unchanged; generations without feedback find no row (LEFT JOIN).
 */
export function feedbackJoin(plan: Plan, ctx: CompileContext, params: ParamBag, window: Expr[]): Join | null {
  const categories = [
    ...new Set(
      plan.metrics.flatMap((m) => (m.def.measure.kind === "feedback" ? [m.def.measure.category] : [])),
    ),
  ];
  if (categories.length === 0) return null;
  const fb = (column: "generation_id" | "organization_id" | "category"): Expr => ({
    t: "col",
    table: "fb",
    column,
  });
  return {
    kind: "left",
    source: {
      t: "subquery",
      alias: "f",
      select: {
        items: [
          { expr: fb("generation_id"), alias: "generation_id" },
          ...categories.map((c): SelectItem => ({
            expr: {
              t: "count",
              where:
                c === null
                  ? null
                  : { t: "cmp", op: "=", left: fb("category"), right: params.add(c, "String") },
            },
            alias: feedbackCountColumn(c),
          })),
        ],
        from: { t: "table", name: "generation_feedback", alias: "fb" },
        where: {
          t: "and",
          args: [
            {
              t: "cmp",
              op: "=",
              left: fb("organization_id"),
              right: params.add(ctx.organizationId, "String"),
            },
            ...window,
          ],
        },
        groupBy: [fb("generation_id")],
      },
    },
    on: {
      t: "cmp",
      op: "=",
      left: { t: "col", table: "f", column: "generation_id" },
      right: { t: "col", table: "g", column: "id" },
    },
  };
}
