import { DomainError } from "../domain/errors.js";
import { listBudgetRows } from "../domain/budgets/budget-repo.js";
import type { BudgetInterval } from "../domain/budgets/budget-intervals.js";
import { RESET_WINDOW, type ResetPeriod } from "../domain/usage/windows.js";
import { hashKey } from "../lib/ids.js";
import { toBigInt } from "../lib/money.js";
import type { Clock } from "../lib/clock.js";
import type { Db } from "../stores/record-store.js";

/** What enforcement needs of a key. */
export interface InferenceKey {
  hash: string;
  id: number;
  organizationId: string;
  workspaceId: string;
  isManagement: boolean;
  disabled: boolean;
  expiresAt: string | null;
  limitNano: bigint | null;
  limitReset: ResetPeriod | null;
  includeByokInLimit: boolean;
  creatorUserId: string | null;
}

/** What enforcement needs of a workspace: its budgets and whether BYOK counts toward them. */
export interface WorkspacePolicy {
  id: string;
  includeByokInBudgets: boolean;
  /** Narrowest interval first. */
  budgets: { interval: BudgetInterval; limitNano: bigint }[];
}

/**
 * The gateway's ONE read port for key and workspace policy. The implementation here reads the
 * record store on every call; the per-instance policy cache (src/domain/policy/) implements the
 * same interface, with the staleness bound it documents, and replaces it at composition.
 */
export interface GatewayPolicy {
  /** A live (not deleted) key by hash, or null. */
  keyByHash(hash: string): Promise<InferenceKey | null>;
  workspace(workspaceId: string): Promise<WorkspacePolicy>;
}

const isResetPeriod = (v: string | null): v is ResetPeriod => v !== null && v in RESET_WINDOW;

export function repositoryPolicy(db: Db): GatewayPolicy {
  return {
    async keyByHash(hash) {
      const row = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("hash", "=", hash)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (!row) return null;
      return {
        hash: row.hash,
        id: Number(row.id),
        organizationId: row.organization_id,
        workspaceId: row.workspace_id,
        isManagement: Number(row.is_management) === 1,
        disabled: Number(row.disabled) === 1,
        expiresAt: row.expires_at,
        limitNano: row.limit_nano === null ? null : toBigInt(row.limit_nano),
        limitReset: isResetPeriod(row.limit_reset) ? row.limit_reset : null,
        includeByokInLimit: Number(row.include_byok_in_limit) === 1,
        creatorUserId: row.creator_user_id,
      };
    },
    async workspace(workspaceId) {
      const ws = await db
        .selectFrom("workspaces")
        .select(["id", "include_byok_in_budgets"])
        .where("id", "=", workspaceId)
        .executeTakeFirst();
      const budgets = await listBudgetRows(db, workspaceId);
      return {
        id: workspaceId,
        includeByokInBudgets: Number(ws?.include_byok_in_budgets ?? 0) === 1,
        budgets: budgets.map((b) => ({
          interval: b.reset_interval as BudgetInterval,
          limitNano: toBigInt(b.limit_nano),
        })),
      };
    },
  };
}

const BEARER_RE = /^Bearer\s+(\S+)\s*$/i;

export const MANAGEMENT_KEY_INFERENCE =
  "Management keys cannot make inference requests: use an ordinary API key (POST /api/v1/keys creates one)";

/**
 * The caller of an inference route: unknown, deleted or expired key 401; disabled key 403;
 * management key 403 (saying so).
 */
export async function authenticateInference(
  policy: GatewayPolicy,
  clock: Clock,
  header: string | undefined,
): Promise<InferenceKey> {
  if (header === undefined || header === "") {
    throw new DomainError("unauthorized", "Missing Authentication header");
  }
  const m = BEARER_RE.exec(header);
  if (!m?.[1]) throw new DomainError("unauthorized", "Authorization header must be 'Bearer <key>'");
  const key = await policy.keyByHash(hashKey(m[1]));
  if (!key || (key.expiresAt !== null && key.expiresAt <= clock.now().toISOString())) {
    throw new DomainError("unauthorized", "Invalid or expired API key");
  }
  if (key.isManagement) throw new DomainError("forbidden", MANAGEMENT_KEY_INFERENCE);
  if (key.disabled) throw new DomainError("forbidden", "API key is disabled");
  return key;
}
