import type { WindowKind } from "../usage/windows.js";

/** Budget intervals from the narrowest to the widest: limits must strictly increase along it. */
export const BUDGET_INTERVALS = ["daily", "weekly", "monthly", "lifetime"] as const;
export type BudgetInterval = (typeof BUDGET_INTERVALS)[number];

/** The usage-ledger window a budget's spend is counted in. */
export const INTERVAL_WINDOW: Record<BudgetInterval, WindowKind> = {
  daily: "day",
  weekly: "week",
  monthly: "month",
  lifetime: "all",
};

export const intervalRank = (i: BudgetInterval): number => BUDGET_INTERVALS.indexOf(i);

/** `reset_interval` on the wire: a lifetime budget never resets, so it is null. */
export const wireResetInterval = (i: BudgetInterval): "daily" | "weekly" | "monthly" | null =>
  i === "lifetime" ? null : i;
