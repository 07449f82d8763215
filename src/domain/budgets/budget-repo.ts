import type { Db } from "../../stores/record-store.js";
import { intervalRank, type BudgetInterval } from "./budget-intervals.js";
import type { BudgetRow } from "./budget-record.js";

/** The workspace's budgets, narrowest interval first (daily, weekly, monthly, lifetime). */
export async function listBudgetRows(db: Db, workspaceId: string): Promise<BudgetRow[]> {
  const rows = await db.selectFrom("budgets").selectAll().where("workspace_id", "=", workspaceId).execute();
  return rows.sort(
    (a, b) =>
      intervalRank(a.reset_interval as BudgetInterval) - intervalRank(b.reset_interval as BudgetInterval),
  );
}

export function findBudgetRow(db: Db, workspaceId: string, interval: BudgetInterval) {
  return db
    .selectFrom("budgets")
    .selectAll()
    .where("workspace_id", "=", workspaceId)
    .where("reset_interval", "=", interval)
    .executeTakeFirst();
}
