import { nanoToUsd } from "../../lib/money.js";
import { planColumns } from "../plan/columns.js";
import type { Plan } from "../plan/plan.js";
import type { CanonicalRow, CanonicalValue } from "../result/canonical.js";
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
  // One writer per shown column, decided once per answer rather than once per cell.
  type Write = (out: Record<string, WireValue>, v: CanonicalValue) => void;
  const writers: [alias: string, write: Write][] = [];
  for (const c of planColumns(plan)) {
    const key = c.wireKey;
    switch (c.ref.kind) {
      case "metric": {
        const metric = plan.metrics[c.ref.index]!;
        if (metric.hidden) continue;
        writers.push([
          c.alias,
          metric.def.kind === "money"
            ? (out, v) => (out[key] = v === null ? null : nanoToUsd(v))
            : (out, v) => (out[key] = v === null ? null : Number(v)),
        ]);
        break;
      }
      case "time": {
        const iso = new Map<CanonicalValue, string>(); // a few buckets repeat over many rows
        writers.push([
          c.alias,
          (out, v) => {
            let s = iso.get(v);
            if (s === undefined) iso.set(v, (s = new Date(v as number).toISOString()));
            out[key] = s;
          },
        ]);
        break;
      }
      case "dimension": {
        const dim = plan.dimensions[c.ref.index]!;
        const map = dim.label === "none" ? undefined : labels[dim.label];
        writers.push([
          c.alias,
          dim.label === "none"
            ? (out, v) => (out[key] = v as string | number | null)
            : (out, v) => {
                const label = v === null ? undefined : map?.get(String(v));
                out[key] = v === null ? null : (label?.label ?? String(v));
                if (dim.label === "user") out.user_email = label?.email ?? null;
              },
        ]);
        break;
      }
      case "classifier":
        writers.push([c.alias, (out, v) => (out[key] = v as string | null)]);
        break;
    }
  }
  return rows.map((row) => {
    const out: Record<string, WireValue> = {};
    for (const [alias, write] of writers) write(out, row[alias] ?? null);
    return out;
  });
}
