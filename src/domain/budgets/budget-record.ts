import type { Selectable } from "kysely";
import { Type, type Static } from "typebox";
import { nanoToUsd, toBigInt } from "../../lib/money.js";
import { Nullable } from "../../lib/typebox.js";
import type { BudgetsTable } from "../../stores/schema.js";
import type { WindowTotals } from "../usage/ledger.js";
import { windowEnd } from "../usage/windows.js";
import { INTERVAL_WINDOW, wireResetInterval, type BudgetInterval } from "./budget-intervals.js";

export type BudgetRow = Selectable<BudgetsTable>;

/** The wire form of a budget: the SDK's `WorkspaceBudget` plus read-only spend fields. */
export const BudgetRecordSchema = Type.Object({
  id: Type.String({ format: "uuid" }),
  workspace_id: Type.String({ format: "uuid" }),
  reset_interval: Nullable(Type.Enum(["daily", "weekly", "monthly"])),
  limit_usd: Type.Number(),
  created_at: Type.String(),
  updated_at: Type.String(),
  /** Workspace spend in the current window (all-time for lifetime), BYOK included when the flag is on. */
  spent_usd: Type.Number({ description: "Read-only: workspace spend in the current window" }),
  remaining_usd: Type.Number({ description: "Read-only: max(0, limit_usd - spent_usd)" }),
  resets_at: Nullable(
    Type.String({ description: "Read-only: end of the current window; null for lifetime" }),
  ),
});
export type BudgetRecord = Static<typeof BudgetRecordSchema>;

export function toBudgetRecord(
  row: BudgetRow,
  usage: WindowTotals,
  includeByok: boolean,
  now: Date,
): BudgetRecord {
  const interval = row.reset_interval as BudgetInterval;
  const kind = INTERVAL_WINDOW[interval];
  const limit = toBigInt(row.limit_nano);
  const spent = usage[kind].usage + (includeByok ? usage[kind].byok : 0n);
  const remaining = limit > spent ? limit - spent : 0n;
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    reset_interval: wireResetInterval(interval),
    limit_usd: nanoToUsd(limit),
    created_at: row.created_at,
    updated_at: row.updated_at,
    spent_usd: nanoToUsd(spent),
    remaining_usd: nanoToUsd(remaining),
    resets_at: windowEnd(kind, now)?.toISOString() ?? null,
  };
}
