import type { Clock } from "../../lib/clock.js";
import type { Db } from "../../stores/record-store.js";
import type { Principal } from "../auth/principal.js";
import { DomainError } from "../errors.js";
import { keyUsable, type Policy } from "../policy/policy.js";
import { keyTotals, usageFields, type KeyUsageFields } from "./key-record.js";

/** The wire form of GET /key: the calling key, as SDK 1.3.19 requires it (compatibility-facts §C1). */
export interface CurrentKey extends KeyUsageFields {
  label: string;
  creator_user_id: string | null;
  expires_at: string | null;
  is_free_tier: boolean;
  is_management_key: boolean;
  /** Deprecated alias of is_management_key. */
  is_provisioning_key: boolean;
  rate_limit: { interval: string; note: string; requests: number };
  allowed_data_regions: string[];
  free_model_daily_requests: { limit: number; remaining: number; used: number };
  organization_id: string;
  workspace_id: string;
}

/**
 * Describes the authenticated key (management or ordinary): its settings from the policy cache,
 * its usage from the ledger (one record-store query).
 */
export async function currentKey(db: Db, policy: Policy, clock: Clock, who: Principal): Promise<CurrentKey> {
  const now = clock.now();
  const k = await policy.keyByHash(who.keyHash);
  // Authentication just found this key; it can only vanish if deleted in between.
  if (!k || !keyUsable(k, now)) throw new DomainError("unauthorized", "Invalid or expired API key");
  const totals = await keyTotals(db, k.hash, now);
  return {
    label: k.label,
    ...usageFields(k.limitNano, k.limitReset, k.includeByokInLimit, totals),
    creator_user_id: k.creatorUserId,
    expires_at: k.expiresAt,
    is_free_tier: false,
    is_management_key: k.isManagement,
    is_provisioning_key: k.isManagement,
    rate_limit: { interval: "1m", note: "This field is deprecated and safe to ignore.", requests: -1 },
    allowed_data_regions: ["global"],
    free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
    organization_id: k.organizationId,
    workspace_id: k.workspaceId,
  };
}
