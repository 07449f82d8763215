import { INTERVAL_WINDOW } from "../../domain/budgets/budget-intervals.js";
import type { WindowTotals } from "../../domain/usage/ledger.js";
import { RESET_WINDOW, windowEnd, type WindowKind } from "../../domain/usage/windows.js";
import type { KeyPolicy, WorkspacePolicy } from "../../domain/policy/policy.js";

/** One limit a request must fit under: the key's limit, or one workspace budget. */
export interface Scope {
  scope: "key" | "workspace";
  /** daily | weekly | monthly | lifetime */
  interval: string;
  limitNano: bigint;
  /** Settled spend in the current window (the ledger). */
  spentNano: bigint;
  /** Open holds of other requests against this limit. */
  reservedNano: bigint;
  resetsAt: string | null;
}

/** The limits a request counts against, with what each has spent and holds. */
export interface Room {
  key: Scope | null;
  budgets: Scope[];
}

/** A hold to take: who, how much counts where. */
export interface HoldRequest {
  /** Request id + attempt: the hold's identity and the settle step's idempotency key. */
  id: string;
  organizationId: string;
  key: KeyPolicy;
  workspace: WorkspacePolicy;
  /** Whether the attempt counts toward the key's limit / the workspace's budgets (BYOK rules). */
  countsKey: boolean;
  countsWorkspace: boolean;
  now: Date;
  /**
   * What the hold will most likely be (the request's worst case, before any capping). The
   * PostgreSQL store inserts the hold with this amount in the statement that reads the room, and
   * corrects it when `decide` sizes it otherwise: one round trip fewer under the workspace lock.
   * Never decides anything; absent, the store inserts 0 and always corrects it.
   */
  expectedNano?: bigint;
}

/**
 * Held amounts of other requests, by what they count toward. A hold counts in the windows of its
 * own request's `now`, where its charge will land (the generation's creation time): a request that
 * began before a reset and is still in flight after it holds nothing in the new day, week or month.
 */
export interface Held {
  /** Toward the key, in the window of its limit (HoldRequest.now's). */
  key: bigint;
  /** Toward the workspace, in each window containing HoldRequest.now. */
  workspace: Record<WindowKind, bigint>;
}

/** The window a key's limit counts in. */
export const keyWindow = (key: KeyPolicy): WindowKind =>
  key.limitReset === null ? "all" : RESET_WINDOW[key.limitReset];

/** The room of a request from ledger totals and other requests' holds. */
export function roomOf(
  req: HoldRequest,
  keyTotals: WindowTotals,
  workspaceTotals: WindowTotals,
  held: Held,
): Room {
  const { key, workspace, now } = req;
  let keyScope: Scope | null = null;
  if (req.countsKey && key.limitNano !== null) {
    const kind = keyWindow(key);
    const t = keyTotals[kind];
    keyScope = {
      scope: "key",
      interval: key.limitReset ?? "lifetime",
      limitNano: key.limitNano,
      spentNano: t.usage + (key.includeByokInLimit ? t.byok : 0n),
      reservedNano: held.key,
      resetsAt: windowEnd(kind, now)?.toISOString() ?? null,
    };
  }
  const budgets: Scope[] = req.countsWorkspace
    ? workspace.budgets.map((b) => {
        const kind = INTERVAL_WINDOW[b.interval];
        const t = workspaceTotals[kind];
        return {
          scope: "workspace" as const,
          interval: b.interval,
          limitNano: b.limitNano,
          spentNano: t.usage + (workspace.includeByokInBudgets ? t.byok : 0n),
          reservedNano: held.workspace[kind],
          resetsAt: windowEnd(kind, now)?.toISOString() ?? null,
        };
      })
    : [];
  return { key: keyScope, budgets };
}
