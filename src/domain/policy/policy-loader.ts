import { toBigInt } from "../../lib/money.js";
import type { Db } from "../../stores/record-store.js";
import type { BudgetInterval } from "../budgets/budget-intervals.js";
import { listBudgetRows } from "../budgets/budget-repo.js";
import { findKeyByHash } from "../keys/key-repo.js";
import type { ResetPeriod } from "../usage/windows.js";
import { resolveWorkspace } from "../workspaces/resolve-workspace.js";
import { findWorkspaceById } from "../workspaces/workspace-repo.js";
import { DomainError } from "../errors.js";
import { loadOrgGuardrails } from "../guardrails/guardrail-repo.js";
import type { PolicyLoader } from "./policy-cache.js";
import type { KeyPolicy, WorkspacePolicy } from "./policy.js";

const RESET_PERIODS = new Set(["daily", "weekly", "monthly"]);

/** The stored JSON array of key ids; anything else (never written by the API) counts as none. */
function keyIdsOf(text: string | null): number[] | null {
  if (text === null) return null;
  try {
    const ids: unknown = JSON.parse(text);
    return Array.isArray(ids) ? ids.filter((n): n is number => typeof n === "number") : null;
  } catch {
    return null;
  }
}

/** Reads policy straight from the record store (what the cache holds, and what it asks on a miss). */
export function recordStoreLoader(db: Db): PolicyLoader {
  return {
    async key(hash): Promise<KeyPolicy | null> {
      const r = await findKeyByHash(db, hash);
      if (!r) return null;
      return {
        id: Number(r.id),
        hash: r.hash,
        organizationId: r.organization_id,
        workspaceId: r.workspace_id,
        isManagement: Number(r.is_management) === 1,
        disabled: Number(r.disabled) === 1,
        expiresAt: r.expires_at,
        deleted: r.deleted_at !== null,
        limitNano: r.limit_nano === null ? null : toBigInt(r.limit_nano),
        limitReset:
          r.limit_reset !== null && RESET_PERIODS.has(r.limit_reset) ? (r.limit_reset as ResetPeriod) : null,
        includeByokInLimit: Number(r.include_byok_in_limit) === 1,
        label: r.label,
        creatorUserId: r.creator_user_id,
      };
    },
    async workspace(id): Promise<WorkspacePolicy | null> {
      const ws = await findWorkspaceById(db, id);
      if (!ws) return null;
      const budgets = await listBudgetRows(db, id);
      return {
        id: ws.id,
        organizationId: ws.organization_id,
        slug: ws.slug,
        isDefault: Number(ws.is_default) === 1,
        deleted: ws.deleted_at !== null,
        includeByokInBudgets: Number(ws.include_byok_in_budgets) === 1,
        ioLogging: {
          enabled: Number(ws.is_observability_io_logging_enabled) === 1,
          samplingRate: Number(ws.io_logging_sampling_rate),
          apiKeyIds: keyIdsOf(ws.io_logging_api_key_ids),
        },
        budgets: budgets.map((b) => ({
          id: b.id,
          interval: b.reset_interval as BudgetInterval,
          limitNano: toBigInt(b.limit_nano),
          createdAt: b.created_at,
          updatedAt: b.updated_at,
        })),
      };
    },
    guardrails: (organizationId) => loadOrgGuardrails(db, organizationId),
    async workspaceIdByRef(organizationId, ref) {
      try {
        return (await resolveWorkspace(db, organizationId, ref)).id;
      } catch (err) {
        if (err instanceof DomainError && err.code === "not_found") return null;
        throw err;
      }
    },
  };
}
