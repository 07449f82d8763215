import type { Selectable } from "kysely";
import { nanoToUsd, toBigInt } from "../../lib/money.js";
import type { BudgetsTable } from "../../stores/schema.js";
import type { WindowTotals } from "../usage/ledger.js";
import { windowEnd } from "../usage/windows.js";
import { INTERVAL_WINDOW, wireResetInterval, type BudgetInterval } from "./budget-intervals.js";

export type BudgetRow = Selectable<BudgetsTable>;

/** The wire form of a budget: the SDK's `WorkspaceBudget` plus read-only spend fields. */
export interface BudgetRecord {
  id: string;
  workspace_id: string;
  reset_interval: "daily" | "weekly" | "monthly" | null;
  limit_usd: number;
  created_at: string;
  updated_at: string;
  /** Workspace spend in the current window (all-time for lifetime), BYOK included when the flag is on. */
  spent_usd: number;
  /** max(0, limit - spent). */
  remaining_usd: number;
  /** When the current window ends; null for lifetime. */
  resets_at: string | null;
}

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
