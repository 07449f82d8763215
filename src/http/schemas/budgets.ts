import { Type } from "typebox";
import { BUDGET_INTERVALS } from "../../domain/budgets/budget-intervals.js";
import { MAX_USD } from "../../lib/money.js";
import { Nullable } from "./common.js";

/** Wire schemas of workspace budgets (management-api.md operations 3 and 4, compatibility-facts.md A3, A4, C2). */

export const BudgetInterval = Type.Enum([...BUDGET_INTERVALS], {
  description: "daily, weekly, monthly, or lifetime (a one-time budget that never resets)",
});

export const WorkspaceRefOnlyParams = Type.Object({ workspace_ref: Type.String({ minLength: 1 }) });
export const BudgetParams = Type.Object({
  workspace_ref: Type.String({ minLength: 1, description: "Workspace UUID or slug" }),
  interval: BudgetInterval,
});

export const PutBudgetBody = Type.Object({
  limit_usd: Type.Number({ exclusiveMinimum: 0, maximum: MAX_USD, description: "Spending limit in USD" }),
  include_byok_in_budgets: Type.Optional(
    Type.Boolean({ description: "Workspace-wide: whether BYOK spend counts toward every budget" }),
  ),
});

export const Budget = Type.Object({
  id: Type.String({ format: "uuid" }),
  workspace_id: Type.String({ format: "uuid" }),
  reset_interval: Nullable(Type.Enum(["daily", "weekly", "monthly"])),
  limit_usd: Type.Number(),
  created_at: Type.String(),
  updated_at: Type.String(),
  spent_usd: Type.Number({ description: "Read-only: workspace spend in the current window" }),
  remaining_usd: Type.Number({ description: "Read-only: max(0, limit_usd - spent_usd)" }),
  resets_at: Nullable(
    Type.String({ description: "Read-only: end of the current window; null for lifetime" }),
  ),
});

export const BudgetResponse = Type.Object({ data: Budget, include_byok_in_budgets: Type.Boolean() });
export const BudgetListResponse = Type.Object({
  data: Type.Array(Budget),
  include_byok_in_budgets: Type.Boolean(),
});
