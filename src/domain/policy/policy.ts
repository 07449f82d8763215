import type { BudgetInterval } from "../budgets/budget-intervals.js";
import type { ResetPeriod } from "../usage/windows.js";
import type { OrgGuardrails } from "../guardrails/guardrail-policy.js";

/**
 * What the request path needs to know about an API key, found by the SHA-256 hash of the key
 * string. Deleted keys are kept (with `deleted: true`) so that a revoked key is refused from memory.
 */
export interface KeyPolicy {
  id: number;
  hash: string;
  organizationId: string;
  workspaceId: string;
  isManagement: boolean;
  disabled: boolean;
  /** ISO 8601 UTC, or null (never expires). */
  expiresAt: string | null;
  deleted: boolean;
  /** Spending limit in nano-USD, or null (none). */
  limitNano: bigint | null;
  limitReset: ResetPeriod | null;
  includeByokInLimit: boolean;
  /** The key's public label (`sk-gh-v1-abc...xyz`) and creator, for GET /key. */
  label: string;
  creatorUserId: string | null;
}

/** One budget of a workspace (the row, money in nano-USD). */
export interface BudgetPolicy {
  id: string;
  interval: BudgetInterval;
  limitNano: bigint;
  createdAt: string;
  updatedAt: string;
}

/**
 * A workspace's IO logging settings (its `is_observability_io_logging_enabled`,
 * `io_logging_sampling_rate` and `io_logging_api_key_ids`).
 */
export interface IoLoggingPolicy {
  enabled: boolean;
  /** Share of generations kept, in [0, 1]. */
  samplingRate: number;
  /** The numeric ids of the keys whose generations are kept; null: every key's; `[]`: none. */
  apiKeyIds: readonly number[] | null;
}

/** What the request path needs to know about a workspace. */
export interface WorkspacePolicy {
  id: string;
  organizationId: string;
  slug: string;
  isDefault: boolean;
  deleted: boolean;
  includeByokInBudgets: boolean;
  /** Whether the content of its generations is kept (docs/content-logging.md). */
  ioLogging: IoLoggingPolicy;
  /** At most one budget per interval, narrowest first (daily, weekly, monthly, lifetime). */
  budgets: readonly BudgetPolicy[];
}

/** A key may authenticate: not deleted, not disabled, not expired at `now`. */
export function keyUsable(k: KeyPolicy, now: Date): boolean {
  return !k.disabled && keyLive(k, now);
}

/** A key exists for its caller: not deleted, not expired at `now` (disabled or not). */
export function keyLive(k: KeyPolicy, now: Date): boolean {
  return !k.deleted && (k.expiresAt === null || k.expiresAt > now.toISOString());
}

/**
 * Key and workspace policy for the request path, served from memory (src/domain/policy/
 * policy-cache.ts; docs/architecture.md "Policy cache").
 *
 * Reads: `keyByHash` and `workspace` answer from memory after the first lookup; a miss reads the
 * record store once however many requests wait for it.
 * Writes: whoever changes a key, a workspace or a budget calls `keyChanged` / `workspaceChanged`
 * after the change is committed (the change is then seen at once by this instance); other instances
 * learn of it from the record store's change notifications (PostgreSQL LISTEN/NOTIFY) within
 * POLICY_PROPAGATION_BOUND_MS.
 */
export interface Policy {
  /** The key with this SHA-256 hex hash (deleted keys included), or null when there is none. */
  keyByHash(hash: string): Promise<KeyPolicy | null>;
  /**
   * What keyByHash would answer at once from what is already known, synchronously; undefined when
   * it would have to look (then call keyByHash). Optional: a policy without it is always asked.
   */
  knownKey?(hash: string): KeyPolicy | null | undefined;
  /** The workspace with this id (deleted workspaces included), or null when there is none. */
  workspace(workspaceId: string): Promise<WorkspacePolicy | null>;
  /**
   * The live workspace of the organization a path reference names (id first, then slug), as
   * `resolveWorkspace` does; null when none.
   */
  workspaceByRef(organizationId: string, ref: string): Promise<WorkspacePolicy | null>;
  /** The organization's guardrails and their key and member assignments (empty maps: none). */
  guardrails(organizationId: string): Promise<OrgGuardrails>;
  /** A key was created, changed or deleted (committed): forget what is known of it. */
  keyChanged(hash: string): void;
  /** A workspace or one of its budgets was created, changed or deleted (committed). */
  workspaceChanged(workspaceId: string): void;
  /** A guardrail, an assignment or a member of the organization changed (committed). */
  guardrailsChanged(organizationId: string): void;
  /** Forget everything (a lost notification channel, a bulk change). */
  clear(): void;
  /** Stops listening for changes. */
  close(): Promise<void>;
}

/** Longest a change made on one instance may go unseen on another (docs/scaling.md). */
export const POLICY_PROPAGATION_BOUND_MS = 1_000;
