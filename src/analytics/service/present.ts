import { nanoToUsd } from "../../lib/money.js";
import { planColumns } from "../plan/columns.js";
import type { Plan } from "../plan/plan.js";
import type { CanonicalRow } from "../result/canonical.js";
import type { LabelMaps } from "./labels.js";

export type WireValue = string | number | null;

/**
 * Canonical rows → response rows: metric values as JSON numbers (money nano-USD → USD here, at the
 * edge), the time bucket as an ISO timestamp under `date__<granularity>`, label-resolved
 * dimensions as labels (unknown ids as the raw id; `user` adds `user_email`), hidden metrics dropped.
 */
export function presentRows(
  plan: Plan,
  rows: readonly CanonicalRow[],
  labels: LabelMaps,
): Record<string, WireValue>[] {
  const columns = planColumns(plan).filter(
    (c) => c.ref.kind !== "metric" || !plan.metrics[c.ref.index]!.hidden,
  );
  return rows.map((row) => {
    const out: Record<string, WireValue> = {};
    for (const c of columns) {
      const v = row[c.alias] ?? null;
      switch (c.ref.kind) {
        case "metric": {
          const kind = plan.metrics[c.ref.index]!.def.kind;
          out[c.wireKey] = v === null ? null : kind === "money" ? nanoToUsd(v) : Number(v);
          break;
        }
        case "time":
          out[c.wireKey] = new Date(v as number).toISOString();
          break;
        case "dimension": {
          const dim = plan.dimensions[c.ref.index]!;
          const label = dim.label === "none" || v === null ? undefined : labels[dim.label]?.get(String(v));
          out[c.wireKey] =
            v === null ? null : dim.label === "none" ? (v as string | number) : (label?.label ?? String(v));
          if (dim.label === "user") out.user_email = label?.email ?? null;
          break;
        }
        case "classifier":
          out[c.wireKey] = v as string | null;
          break;
      }
    }
    return out;
  });
}
