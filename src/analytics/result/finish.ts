import { GROUP_MAX_ALIAS } from "../emit/build-select.js";
import { aliasOf } from "../plan/columns.js";
import type { Plan } from "../plan/plan.js";
import { decodeEngineRow, type CanonicalResult } from "./canonical.js";

/**
 * Engine rows (ordered, at most limit + 1) → the result: cut to the limit, `truncated` when the
 * limit or group_limit dropped rows. With the automatic limit of a time series ordered by time,
 * a cut never splits a time bucket: the partly returned bucket is dropped (unless it is the only one).
 */
export function finishEngineRows(
  plan: Plan,
  engineRows: readonly Record<string, unknown>[],
): CanonicalResult {
  const groupCut =
    plan.groupLimit !== null && engineRows.some((r) => Number(r[GROUP_MAX_ALIAS]) > plan.groupLimit!);
  const rows = engineRows.slice(0, plan.limit).map((r) => decodeEngineRow(plan, r));
  const limitCut = engineRows.length > plan.limit;
  if (limitCut && plan.autoLimit && plan.order[0]?.column.kind === "time") {
    const t = aliasOf(plan, { kind: "time" });
    const last = rows[rows.length - 1]![t];
    const keep = rows.findIndex((r) => r[t] === last);
    if (
      keep > 0 &&
      engineRows.length > plan.limit &&
      decodeEngineRow(plan, engineRows[plan.limit]!)[t] === last
    ) {
      rows.length = keep;
    }
  }
  return { rows, truncated: groupCut || limitCut };
}
