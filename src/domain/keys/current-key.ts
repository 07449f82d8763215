import { Type, type Static } from "typebox";
import type { Clock } from "../../lib/clock.js";
import { Nullable } from "../../lib/typebox.js";
import type { Db } from "../../stores/record-store.js";
import type { Principal } from "../auth/principal.js";
import { DomainError } from "../errors.js";
import { keyUsable, type Policy } from "../policy/policy.js";
import { KeyUsageSchema, keyTotals, usageFields } from "./key-record.js";

/** GET /key: the calling key, as the SDK requires it (docs/wire-compatibility.md "Keys record"). */
export const CurrentKeySchema = Type.Object({
  label: Type.String(),
  ...KeyUsageSchema.properties,
  creator_user_id: Nullable(Type.String()),
  expires_at: Nullable(Type.String({ format: "date-time" })),
  is_free_tier: Type.Boolean(),
  is_management_key: Type.Boolean(),
  /** Deprecated alias of is_management_key. */
  is_provisioning_key: Type.Boolean({ deprecated: true }),
  rate_limit: Type.Object({ interval: Type.String(), note: Type.String(), requests: Type.Integer() }),
  allowed_data_regions: Type.Array(Type.String()),
  free_model_daily_requests: Type.Object({
    limit: Type.Integer(),
    remaining: Type.Integer(),
    used: Type.Integer(),
  }),
  organization_id: Type.String(),
  workspace_id: Type.String(),
});
export type CurrentKey = Static<typeof CurrentKeySchema>;

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
