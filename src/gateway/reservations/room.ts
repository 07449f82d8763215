import { INTERVAL_WINDOW } from "../../domain/budgets/budget-intervals.js";
import type { WindowTotals } from "../../domain/usage/ledger.js";
import { RESET_WINDOW, windowEnd, type WindowKind } from "../../domain/usage/windows.js";
import type { KeyPolicy, WorkspacePolicy } from "../../domain/policy/policy.js";
import type { GuardrailBudget } from "../../domain/guardrails/guardrail-policy.js";

/** One limit a request must fit under: the key's limit, one workspace budget, or one guardrail budget. */
export interface Scope {
  scope: "key" | "workspace" | "guardrail";
  /** For a guardrail budget: which guardrail, and whose spend it counts. */
  guardrail?: { id: string; name: string; holder: "key" | "member" };
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
  /** Guardrail budgets (docs/guardrails.md "Budgets"); absent: none. */
  guardrails?: Scope[];
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
  /** Whether the attempt uses the organization's own provider key (guardrails' include_byok_in_budgets). */
  byok?: boolean;
  /**
   * The guardrail budgets the request counts against (per key, or per member: the key's creator,
   * `key.creatorUserId`); absent or empty: none, and nothing more is read.
   */
  guardrailBudgets?: readonly GuardrailBudget[];
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
  /**
   * For guardrail budgets (read only when the request has some): every open hold of the key, and
   * of every key of its creator (the member), in each window containing HoldRequest.now. All holds
   * count, BYOK ones too (a hold does not say whether it is BYOK): that only refuses more.
   */
  guardrail?: { key: Record<WindowKind, bigint>; member: Record<WindowKind, bigint> };
}

/** Ledger totals for guardrail budgets: the key's, and its creator's keys' summed. */
export interface GuardrailTotals {
  key: WindowTotals;
  member: WindowTotals;
}

/** Whether a request has guardrail budgets held per key / per member. */
export function guardrailHolders(req: HoldRequest): { key: boolean; member: boolean } {
  let key = false;
  let member = false;
  for (const b of req.guardrailBudgets ?? []) {
    if (b.holder === "key") key = true;
    else if (req.key.creatorUserId !== null) member = true;
  }
  return { key, member };
}

export const ZERO_WINDOWS = (): Record<WindowKind, bigint> => ({ day: 0n, week: 0n, month: 0n, all: 0n });

/** The window a key's limit counts in. */
export const keyWindow = (key: KeyPolicy): WindowKind =>
  key.limitReset === null ? "all" : RESET_WINDOW[key.limitReset];

/** The room of a request from ledger totals and other requests' holds. */
export function roomOf(
  req: HoldRequest,
  keyTotals: WindowTotals,
  workspaceTotals: WindowTotals,
  held: Held,
  guardrailTotals?: GuardrailTotals,
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
  if (!req.guardrailBudgets || req.guardrailBudgets.length === 0) return { key: keyScope, budgets };
  const guardrails: Scope[] = [];
  for (const b of req.guardrailBudgets) {
    // A BYOK attempt counts toward a guardrail budget only where the guardrail says so; a member
    // budget needs a member (the key's creator).
    if ((req.byok && !b.includeByok) || (b.holder === "member" && key.creatorUserId === null)) continue;
    const kind = INTERVAL_WINDOW[b.interval];
    const t = (b.holder === "key" ? guardrailTotals?.key : guardrailTotals?.member)?.[kind];
    guardrails.push({
      scope: "guardrail",
      guardrail: { id: b.guardrailId, name: b.name, holder: b.holder },
      interval: b.interval,
      limitNano: b.limitNano,
      spentNano: t ? t.usage + (b.includeByok ? t.byok : 0n) : 0n,
      reservedNano: held.guardrail?.[b.holder][kind] ?? 0n,
      resetsAt: windowEnd(kind, now)?.toISOString() ?? null,
    });
  }
  return { key: keyScope, budgets, guardrails };
}
