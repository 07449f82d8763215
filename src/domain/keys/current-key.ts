import type { Clock } from "../../lib/clock.js";
import type { Db } from "../../stores/record-store.js";
import type { Principal } from "../auth/principal.js";
import { DomainError } from "../errors.js";
import { findKey } from "./key-repo.js";
import { keyTotals, keyUsageFields, type KeyUsageFields } from "./key-record.js";

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

/** Describes the authenticated key (management or ordinary). */
export async function currentKey(db: Db, clock: Clock, who: Principal): Promise<CurrentKey> {
  const row = await findKey(db, who.organizationId, who.keyHash);
  // Authentication just found this key; it can only vanish if deleted in between.
  if (!row) throw new DomainError("unauthorized", "Invalid or expired API key");
  const isManagement = Number(row.is_management) === 1;
  return {
    label: row.label,
    ...keyUsageFields(row, await keyTotals(db, row.hash, clock.now())),
    creator_user_id: row.creator_user_id,
    expires_at: row.expires_at,
    is_free_tier: false,
    is_management_key: isManagement,
    is_provisioning_key: isManagement,
    rate_limit: { interval: "1m", note: "This field is deprecated and safe to ignore.", requests: -1 },
    allowed_data_regions: ["global"],
    free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
    organization_id: row.organization_id,
    workspace_id: row.workspace_id,
  };
}
