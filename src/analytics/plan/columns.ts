import type { ColumnRef, Plan } from "./plan.js";

/**
 * The result columns of a plan: the SQL alias (model-derived, never from a request) and the key
 * the column has in response rows.
 */
export interface PlanColumn {
  ref: ColumnRef;
  alias: string;
  wireKey: string;
}

export const CLF_NAME_KEY = "clf_dimension_name";
export const CLF_VALUE_KEY = "clf_dimension_value";

export function classifierColumnCount(plan: Pick<Plan, "classifier">): number {
  if (!plan.classifier) return 0;
  return plan.classifier.names ? plan.classifier.names.length : 2;
}

export function aliasOf(plan: Pick<Plan, "metrics" | "dimensions" | "classifier">, ref: ColumnRef): string {
  switch (ref.kind) {
    case "metric":
      return `m_${plan.metrics[ref.index]!.def.name}`;
    case "dimension":
      return `d_${plan.dimensions[ref.index]!.name}`;
    case "time":
      return "t_bucket";
    case "classifier":
      return plan.classifier?.names ? `c_${ref.index}` : ref.index === 0 ? "c_name" : "c_value";
  }
}

export function wireKeyOf(
  plan: Pick<Plan, "metrics" | "dimensions" | "classifier" | "granularity">,
  ref: ColumnRef,
): string {
  switch (ref.kind) {
    case "metric":
      return plan.metrics[ref.index]!.def.name;
    case "dimension":
      return plan.dimensions[ref.index]!.name;
    case "time":
      return `date__${plan.granularity!.name}`;
    case "classifier":
      return plan.classifier!.names?.[ref.index] ?? (ref.index === 0 ? CLF_NAME_KEY : CLF_VALUE_KEY);
  }
}

const COLUMNS = new WeakMap<Plan, readonly PlanColumn[]>();

/**
 * Group-by columns (dimensions, time bucket, classifier columns), then metrics. Computed once per
 * plan (plans are immutable): result decoding asks for them once per row.
 */
export function planColumns(plan: Plan): readonly PlanColumn[] {
  let columns = COLUMNS.get(plan);
  if (!columns) {
    columns = Object.freeze(computeColumns(plan));
    COLUMNS.set(plan, columns);
  }
  return columns;
}

function computeColumns(plan: Plan): PlanColumn[] {
  const refs: ColumnRef[] = [
    ...plan.dimensions.map((_, index): ColumnRef => ({ kind: "dimension", index })),
    ...(plan.granularity ? [{ kind: "time" } as const] : []),
    ...Array.from({ length: classifierColumnCount(plan) }, (_, index): ColumnRef => ({
      kind: "classifier",
      index,
    })),
    ...plan.metrics.map((_, index): ColumnRef => ({ kind: "metric", index })),
  ];
  return refs.map((ref) => ({ ref, alias: aliasOf(plan, ref), wireKey: wireKeyOf(plan, ref) }));
}

export const groupColumns = (plan: Plan): PlanColumn[] =>
  planColumns(plan).filter((c) => c.ref.kind !== "metric");
