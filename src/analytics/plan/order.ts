import { invalid } from "../../domain/errors.js";
import type { ColumnRef, Plan, SortKey } from "./plan.js";
import type { QueryRequest } from "./query-request.js";

type Shape = Pick<Plan, "metrics" | "dimensions" | "granularity" | "classifier">;

function orderColumn(shape: Shape, field: string): ColumnRef {
  if (field === "date" || (shape.granularity && field === `date__${shape.granularity.name}`)) {
    if (!shape.granularity) throw invalid("order_by.field: date requires a granularity");
    return { kind: "time" };
  }
  const metric = shape.metrics.findIndex((m) => m.def.name === field);
  if (metric >= 0) return { kind: "metric", index: metric };
  const dim = shape.dimensions.findIndex((d) => d.name === field);
  if (dim >= 0) return { kind: "dimension", index: dim };
  const clf = shape.classifier?.names?.indexOf(field) ?? -1;
  if (clf >= 0) return { kind: "classifier", index: clf };
  throw invalid(
    "order_by.field: must be a requested metric, request_count, a requested dimension or classifier dimension, or date",
  );
}

const same = (a: ColumnRef, b: ColumnRef): boolean =>
  a.kind === b.kind &&
  (a.kind === "time" || (a as { index: number }).index === (b as { index: number }).index);

/**
 * The sort chain: order_by (default: time descending with a granularity, else the first metric
 * descending), then ties by dimension values ascending, classifier columns ascending and the time
 * bucket descending. The tie keys form the group key, so the order is total.
 */
export function planOrder(
  shape: Shape,
  orderBy: QueryRequest["order_by"],
  classifierColumns: number,
): SortKey[] {
  const primary: SortKey = orderBy
    ? { column: orderColumn(shape, orderBy.field), direction: orderBy.direction }
    : shape.granularity
      ? { column: { kind: "time" }, direction: "desc" }
      : { column: { kind: "metric", index: 0 }, direction: "desc" };
  const ties: SortKey[] = [
    ...shape.dimensions.map((_, index): SortKey => ({
      column: { kind: "dimension", index },
      direction: "asc",
    })),
    ...Array.from({ length: classifierColumns }, (_, index): SortKey => ({
      column: { kind: "classifier", index },
      direction: "asc",
    })),
    ...(shape.granularity ? [{ column: { kind: "time" }, direction: "desc" } as SortKey] : []),
  ];
  return [primary, ...ties.filter((k) => !same(k.column, primary.column))];
}
