import { toBigInt } from "../../lib/money.js";
import { planColumns } from "../plan/columns.js";
import type { Plan } from "../plan/plan.js";

/**
 * A result row before presentation, keyed by column alias: integer and money metrics as exact
 * bigint (money in nano-USD), float metrics as number or null, the time bucket as epoch ms,
 * dimension values as stored (ids, not labels). Engines and the reference evaluator both produce
 * this form, so they can be compared exactly.
 */
export type CanonicalValue = string | number | bigint | null;
export type CanonicalRow = Record<string, CanonicalValue>;

export interface CanonicalResult {
  rows: CanonicalRow[];
  /** More rows existed than were returned (limit or group_limit cut some). */
  truncated: boolean;
}

function num(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  return typeof v === "number" ? v : Number(v);
}

const text = (v: unknown): string =>
  typeof v === "string"
    ? v
    : typeof v === "number" || typeof v === "bigint"
      ? v.toString()
      : JSON.stringify(v);

/** An engine row (the port's representation) → canonical row. */
export function decodeEngineRow(plan: Plan, row: Record<string, unknown>): CanonicalRow {
  const out: CanonicalRow = {};
  for (const c of planColumns(plan)) {
    const v = row[c.alias];
    switch (c.ref.kind) {
      case "metric": {
        const kind = plan.metrics[c.ref.index]!.def.kind;
        out[c.alias] = kind === "float" ? num(v) : toBigInt(v as bigint | number | string | null);
        break;
      }
      case "time":
        out[c.alias] = num(v);
        break;
      case "dimension":
        out[c.alias] =
          v === null || v === undefined
            ? null
            : plan.dimensions[c.ref.index]!.value_type === "integer"
              ? Number(v)
              : text(v);
        break;
      case "classifier":
        out[c.alias] = v === null || v === undefined ? null : text(v);
        break;
    }
  }
  return out;
}
