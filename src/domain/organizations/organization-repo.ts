import type { Db } from "../../stores/record-store.js";
import { toBigInt } from "../../lib/money.js";

/** An organization as listed: identity, display name and creation time (RFC 3339). */
export interface OrganizationRow {
  id: string;
  name: string;
  created_at: string;
}

/** Inserts an organization. */
export async function insertOrganization(db: Db, o: { id: string; name: string; now: Date }): Promise<void> {
  await db
    .insertInto("organizations")
    .values({ id: o.id, name: o.name, created_at: o.now.toISOString() })
    .execute();
}

/** Every organization, oldest first (ties by id): the first is the install's default one. */
export async function listOrganizations(db: Db): Promise<OrganizationRow[]> {
  return db
    .selectFrom("organizations")
    .select(["id", "name", "created_at"])
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** The oldest organization (the one the first start created), or null on an empty store. */
export async function firstOrganization(db: Db): Promise<OrganizationRow | null> {
  return (
    (await db
      .selectFrom("organizations")
      .select(["id", "name", "created_at"])
      .orderBy("created_at")
      .orderBy("id")
      .limit(1)
      .executeTakeFirst()) ?? null
  );
}

/** One organization by id, or null. */
export async function findOrganization(db: Db, id: string): Promise<OrganizationRow | null> {
  return (
    (await db
      .selectFrom("organizations")
      .select(["id", "name", "created_at"])
      .where("id", "=", id)
      .executeTakeFirst()) ?? null
  );
}

/**
 * The organization's credit line in nano-USD: null when not set, undefined when there is no such
 * organization (docs/api-notes.md "Credits").
 */
export async function organizationCreditLine(db: Db, id: string): Promise<bigint | null | undefined> {
  const row = await db
    .selectFrom("organizations")
    .select("credit_line_nano")
    .where("id", "=", id)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return row.credit_line_nano === null ? null : toBigInt(row.credit_line_nano);
}

/** Sets (or, with null, clears) the organization's credit line; false when there is no such organization. */
export async function setOrganizationCreditLine(db: Db, id: string, nano: bigint | null): Promise<boolean> {
  const [result] = await db
    .updateTable("organizations")
    .set({ credit_line_nano: nano })
    .where("id", "=", id)
    .execute();
  return (result?.numUpdatedRows ?? 0n) > 0n;
}
