import { Type } from "typebox";
import { BUDGET_INTERVALS } from "../../domain/budgets/budget-intervals.js";
import { BudgetRecordSchema } from "../../domain/budgets/budget-record.js";
import { MAX_USD } from "../../lib/money.js";

/** Wire schemas of workspace budgets (docs/wire-compatibility.md "Workspaces and budgets records"). */

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

export const BudgetResponse = Type.Object({
  data: BudgetRecordSchema,
  include_byok_in_budgets: Type.Boolean(),
});
export const BudgetListResponse = Type.Object({
  data: Type.Array(BudgetRecordSchema),
  include_byok_in_budgets: Type.Boolean(),
});
