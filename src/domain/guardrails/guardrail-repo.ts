import { toBigInt } from "../../lib/money.js";
import type { Db } from "../../stores/record-store.js";
import type { GuardrailsTable } from "../../stores/schema.js";
import type {
  GuardrailPolicy,
  GuardrailResetInterval,
  GuardrailRules,
  OrgGuardrails,
} from "./guardrail-policy.js";

/** A stored guardrail row as the request path's policy. */
export function guardrailPolicyOf(r: GuardrailsTable): GuardrailPolicy {
  return {
    id: r.id,
    organizationId: r.organization_id,
    workspaceId: r.workspace_id,
    name: r.name,
    isDefault: Number(r.is_default) === 1,
    limitNano: r.limit_nano === null ? null : toBigInt(r.limit_nano),
    resetInterval: r.reset_interval as GuardrailResetInterval | null,
    includeByokInBudgets: Number(r.include_byok_in_budgets) === 1,
    rules: JSON.parse(r.rules) as GuardrailRules,
  };
}

/**
 * An organization's guardrails with every key and member assignment (what the policy cache holds
 * for it): three reads, whatever the organization's size.
 */
export async function loadOrgGuardrails(db: Db, organizationId: string): Promise<OrgGuardrails> {
  const rows = await db
    .selectFrom("guardrails")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .execute();
  if (rows.length === 0) return { byId: new Map(), keyAssignments: new Map(), memberAssignments: new Map() };
  const keys = await db
    .selectFrom("guardrail_key_assignments")
    .select(["key_hash", "guardrail_id"])
    .where("organization_id", "=", organizationId)
    .execute();
  const members = await db
    .selectFrom("guardrail_member_assignments")
    .select(["user_id", "guardrail_id"])
    .where("organization_id", "=", organizationId)
    .execute();
  return {
    byId: new Map(rows.map((r) => [r.id, guardrailPolicyOf(r)])),
    keyAssignments: new Map(keys.map((k) => [k.key_hash, k.guardrail_id])),
    memberAssignments: new Map(members.map((m) => [m.user_id, m.guardrail_id])),
  };
}
