import { invalid, notFound } from "../errors.js";
import type { Clock } from "../../lib/clock.js";
import { newId } from "../../lib/ids.js";
import { toBigInt, usdToNano } from "../../lib/money.js";
import type { Db, RecordStore } from "../../stores/record-store.js";
import { readUsage } from "../usage/ledger.js";
import { resolveWorkspace } from "../workspaces/resolve-workspace.js";
import { updateWorkspaceColumns, type WorkspaceRow } from "../workspaces/workspace-repo.js";
import type { BudgetInterval } from "./budget-intervals.js";
import { checkBudgetOrdering } from "./budget-ordering.js";
import { toBudgetRecord, type BudgetRecord, type BudgetRow } from "./budget-record.js";
import { findBudgetRow, listBudgetRows } from "./budget-repo.js";
import type { BudgetPolicy, Policy, WorkspacePolicy } from "../policy/policy.js";

export interface BudgetResponse {
  data: BudgetRecord;
  include_byok_in_budgets: boolean;
}

export interface BudgetListResponse {
  data: BudgetRecord[];
  include_byok_in_budgets: boolean;
}

export interface PutBudgetInput {
  limit_usd: number;
  include_byok_in_budgets?: boolean;
}

const byokFlag = (ws: WorkspaceRow): boolean => Number(ws.include_byok_in_budgets) === 1;

async function present(db: Db, ws: WorkspaceRow, rows: BudgetRow[], now: Date): Promise<BudgetRecord[]> {
  const usage = (await readUsage(db, "workspace", [ws.id], now)).get(ws.id)!;
  return rows.map((r) => toBudgetRecord(r, usage, byokFlag(ws), now));
}

/**
 * Creates or replaces the workspace's budget for one interval, and sets the workspace-wide BYOK
 * flag when given. The ordering check and the writes run in one transaction that first locks the
 * workspace row, so two concurrent PUTs cannot each pass the check against a state the other is
 * about to change. A refused request changes nothing (neither the budget nor the flag).
 */
export async function putBudget(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  ref: string,
  interval: BudgetInterval,
  input: PutBudgetInput,
): Promise<BudgetResponse> {
  const limit = usdToNano(input.limit_usd);
  if (limit <= 0n) throw invalid("limit_usd: must be at least 0.000000001 (1 nano-USD)");
  return store.transaction(async (trx) => {
    let ws = await resolveWorkspace(trx, organizationId, ref, { forUpdate: store.caps.supportsForUpdate });
    const now = clock.now();
    const at = now.toISOString();
    const rows = await listBudgetRows(trx, ws.id);
    const limits = new Map(rows.map((r) => [r.reset_interval as BudgetInterval, toBigInt(r.limit_nano)]));
    limits.set(interval, limit);
    checkBudgetOrdering(limits, interval);

    const existing = rows.find((r) => r.reset_interval === interval);
    if (existing) {
      await trx
        .updateTable("budgets")
        .set({ limit_nano: limit, updated_at: at })
        .where("id", "=", existing.id)
        .execute();
    } else {
      await trx
        .insertInto("budgets")
        .values({
          id: newId(),
          workspace_id: ws.id,
          reset_interval: interval,
          limit_nano: limit,
          created_at: at,
          updated_at: at,
        })
        .execute();
    }
    const flag = input.include_byok_in_budgets;
    if (flag !== undefined && flag !== byokFlag(ws)) {
      await updateWorkspaceColumns(trx, ws.id, { include_byok_in_budgets: flag ? 1 : 0 }, now);
      ws = { ...ws, include_byok_in_budgets: flag ? 1 : 0, updated_at: at };
    }
    const row = (await findBudgetRow(trx, ws.id, interval))!;
    const [data] = await present(trx, ws, [row], now);
    return { data: data!, include_byok_in_budgets: byokFlag(ws) };
  });
}

/** The live workspace a path reference names, from the policy cache; 404 when none. */
async function policyWorkspace(
  policy: Policy,
  organizationId: string,
  ref: string,
): Promise<WorkspacePolicy> {
  const ws = await policy.workspaceByRef(organizationId, ref);
  if (!ws || ws.deleted || ws.organizationId !== organizationId) throw notFound("Workspace");
  return ws;
}

const budgetRow = (ws: WorkspacePolicy, b: BudgetPolicy): BudgetRow => ({
  id: b.id,
  workspace_id: ws.id,
  reset_interval: b.interval,
  limit_nano: b.limitNano,
  created_at: b.createdAt,
  updated_at: b.updatedAt,
});

/** Budgets and their spend: the limits from the policy cache, the spend from the usage ledger. */
async function presentPolicy(
  db: Db,
  ws: WorkspacePolicy,
  budgets: readonly BudgetPolicy[],
  now: Date,
): Promise<BudgetRecord[]> {
  if (budgets.length === 0) return [];
  const usage = (await readUsage(db, "workspace", [ws.id], now)).get(ws.id)!;
  return budgets.map((b) => toBudgetRecord(budgetRow(ws, b), usage, ws.includeByokInBudgets, now));
}

/** One interval's budget; 404 when the workspace has none for it. */
export async function getBudget(
  store: RecordStore,
  policy: Policy,
  clock: Clock,
  organizationId: string,
  ref: string,
  interval: BudgetInterval,
): Promise<BudgetResponse> {
  const ws = await policyWorkspace(policy, organizationId, ref);
  const budget = ws.budgets.find((b) => b.interval === interval);
  if (!budget) throw notFound("Budget");
  const [data] = await presentPolicy(store.db, ws, [budget], clock.now());
  return { data: data!, include_byok_in_budgets: ws.includeByokInBudgets };
}

/** Every budget of the workspace, ordered daily, weekly, monthly, lifetime. */
export async function listBudgets(
  store: RecordStore,
  policy: Policy,
  clock: Clock,
  organizationId: string,
  ref: string,
): Promise<BudgetListResponse> {
  const ws = await policyWorkspace(policy, organizationId, ref);
  return {
    data: await presentPolicy(store.db, ws, ws.budgets, clock.now()),
    include_byok_in_budgets: ws.includeByokInBudgets,
  };
}

/**
 * Removes one interval's budget; idempotent (an absent budget is not an error). Removing a budget
 * cannot break the ordering, because the rule holds for every pair, not only neighbours.
 */
export async function deleteBudget(
  store: RecordStore,
  organizationId: string,
  ref: string,
  interval: BudgetInterval,
): Promise<void> {
  await store.transaction(async (trx) => {
    const ws = await resolveWorkspace(trx, organizationId, ref, { forUpdate: store.caps.supportsForUpdate });
    await trx
      .deleteFrom("budgets")
      .where("workspace_id", "=", ws.id)
      .where("reset_interval", "=", interval)
      .execute();
  });
}
