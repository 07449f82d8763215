import { ACTIVITY_COLUMNS, MONEY_COLUMNS, type ActivityRow } from "../activity/activity-row.js";
import { GENERATION_COLUMNS } from "./activity-columns.js";

/** The stored columns of `generations` a query selects by name: all but the timestamp. */
export const COLUMNS_BUT_CREATED_AT: string = ACTIVITY_COLUMNS.filter((c) => c !== "created_at_ms").join(
  ", ",
);

/**
 * A row of a query over `generations` (in ActivityStore.query's representation, `created_at_ms`
 * selected as epoch milliseconds) as an ActivityRow: numbers, money as bigint, booleans.
 */
export function activityRowOf(r: Record<string, unknown>): ActivityRow {
  const out: Record<string, unknown> = {};
  for (const c of GENERATION_COLUMNS) {
    const v = r[c.field];
    if (v === null || v === undefined) out[c.field] = null;
    else if (MONEY_COLUMNS.has(c.field)) out[c.field] = BigInt(v as bigint | number | string);
    else if (c.kind === "bool") out[c.field] = Boolean(v);
    else if (c.kind === "string" || c.kind === "string?")
      out[c.field] = typeof v === "string" ? v : JSON.stringify(v);
    else out[c.field] = Number(v);
  }
  return out as unknown as ActivityRow;
}
