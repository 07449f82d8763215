import type { HoldPlan } from "../../src/gateway/reservations/enforcement.js";
import type { HoldRequest } from "../../src/gateway/reservations/room.js";
import type { BudgetPolicy, KeyPolicy, WorkspacePolicy } from "../../src/domain/policy/policy.js";

/**
 * Key and workspace policies as the gateway holds them, for tests (and benches) that drive a
 * reservation store directly: a usable ordinary key and a live workspace, with what the caller
 * gives laid over them.
 */

type WorkspaceRef = Pick<WorkspacePolicy, "id" | "organizationId">;

/** A live, non-default workspace without budgets (slug = id) unless `over` says otherwise. */
export const workspacePolicy = (ws: WorkspaceRef, over: Partial<WorkspacePolicy> = {}): WorkspacePolicy => ({
  ...ws,
  slug: ws.id,
  isDefault: false,
  deleted: false,
  includeByokInBudgets: false,
  ioLogging: { enabled: false, samplingRate: 1, apiKeyIds: null },
  budgets: [],
  ...over,
});

/** A monthly budget of `limitNano`. */
export const monthlyBudget = (limitNano: bigint): BudgetPolicy => ({
  id: "budget-monthly",
  interval: "monthly",
  limitNano,
  createdAt: "",
  updatedAt: "",
});

/** A usable ordinary key of `ws` with this hash; no limit unless `over` gives one. */
export const keyPolicy = (ws: WorkspaceRef, hash: string, over: Partial<KeyPolicy> = {}): KeyPolicy => ({
  id: 1,
  hash,
  organizationId: ws.organizationId,
  workspaceId: ws.id,
  isManagement: false,
  disabled: false,
  expiresAt: null,
  deleted: false,
  limitNano: null,
  limitReset: null,
  includeByokInLimit: false,
  label: "sk-gh-v1-abc...xyz",
  creatorUserId: null,
  ...over,
});

/**
 * A hold request of `key` in `ws`, counting toward both the key's limit and the workspace's
 * budgets, at the present moment, unless `over` says otherwise.
 */
export const holdRequest = (
  ws: WorkspacePolicy,
  key: KeyPolicy,
  id: string,
  over: Partial<HoldRequest> = {},
): HoldRequest => ({
  id,
  organizationId: ws.organizationId,
  key,
  workspace: ws,
  countsKey: true,
  countsWorkspace: true,
  now: new Date(),
  ...over,
});

/** A `decide` that takes a hold of `amountNano` whatever the room. */
export const fixedPlan = (amountNano: bigint) => (): HoldPlan => ({
  amountNano,
  maxTokens: 1,
  capped: false,
});
