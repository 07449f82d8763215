import { toBigInt } from "../../lib/money.js";
import type { Db } from "../../stores/record-store.js";
import type { GuardrailsTable } from "../../stores/schema.js";
import type {
  GuardrailPolicy,
  GuardrailResetInterval,
  GuardrailRules,
  OrgGuardrails,
} from "./guardrail-policy.js";
import { keyAssignmentsOfOrganization } from "./key-assignment-repo.js";
import { memberAssignmentsOfOrganization } from "./member-assignment-repo.js";

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
  const keys = await keyAssignmentsOfOrganization(db, organizationId);
  const members = await memberAssignmentsOfOrganization(db, organizationId);
  return {
    byId: new Map(rows.map((r) => [r.id, guardrailPolicyOf(r)])),
    keyAssignments: new Map(keys.map((k) => [k.key_hash, k.guardrail_id])),
    memberAssignments: new Map(members.map((m) => [m.user_id, m.guardrail_id])),
  };
}

export async function insertGuardrailRow(db: Db, row: GuardrailsTable): Promise<void> {
  await db.insertInto("guardrails").values(row).execute();
}

/** Inserts the row unless one with its id exists (a workspace default written concurrently). */
export async function insertGuardrailRowIfAbsent(db: Db, row: GuardrailsTable): Promise<void> {
  await db
    .insertInto("guardrails")
    .values(row)
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
}

/**
 * A guardrail of the organization, optionally locked until the transaction ends: `update` by a
 * write to it, `share` by an assignment (so a concurrent delete waits for it). Pass "none" where
 * the engine has no row locks (SQLite serialises transactions).
 */
export async function findGuardrailRow(
  db: Db,
  organizationId: string,
  id: string,
  lock: "none" | "share" | "update" = "none",
): Promise<GuardrailsTable | undefined> {
  let q = db
    .selectFrom("guardrails")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "=", id);
  if (lock === "update") q = q.forUpdate();
  if (lock === "share") q = q.forShare();
  return q.executeTakeFirst();
}

export type GuardrailPatch = Omit<
  GuardrailsTable,
  "id" | "organization_id" | "workspace_id" | "is_default" | "created_at"
>;

export async function updateGuardrailRow(
  db: Db,
  organizationId: string,
  id: string,
  patch: GuardrailPatch,
): Promise<void> {
  await db
    .updateTable("guardrails")
    .set(patch)
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .execute();
}

/** Deletes a guardrail row (its assignments are the assignment repositories'); false when none. */
export async function deleteGuardrailRow(db: Db, organizationId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom("guardrails")
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/** A page of the organization's guardrails (of one workspace when given), oldest first, and the total. */
export async function listGuardrailRows(
  db: Db,
  q: { organizationId: string; workspaceId: string | null; offset: number; limit: number },
): Promise<{ rows: GuardrailsTable[]; total: number }> {
  let query = db.selectFrom("guardrails").where("organization_id", "=", q.organizationId);
  if (q.workspaceId !== null) query = query.where("workspace_id", "=", q.workspaceId);
  const count = await query.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirst();
  const rows = await query
    .selectAll()
    .orderBy("created_at")
    .orderBy("id")
    .offset(q.offset)
    .limit(q.limit)
    .execute();
  return { rows, total: Number(count?.n ?? 0) };
}
