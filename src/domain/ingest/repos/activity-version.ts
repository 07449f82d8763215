import type { Db } from "../../../stores/record-store.js";
import { QueryTemplate } from "../../../stores/query-template.js";
import { toBigInt } from "../../../lib/money.js";

/**
 * A per-organization counter bumped in every ingest transaction that accepts at least one record.
 * Analytics caches store the version they were computed at and are stale once it moved, so a
 * result never outlives the activity it summarised (read-your-writes for analytics too).
 */
export async function bumpActivityVersion(db: Db, organizationId: string): Promise<void> {
  await bump.execute(db, "", organizationId);
}

/**
 * Bumps each organization's version once, in one order (sorted), so that two transactions that
 * bump overlapping sets never lock them crosswise.
 */
export async function bumpActivityVersions(db: Db, organizationIds: Iterable<string>): Promise<void> {
  for (const org of [...new Set(organizationIds)].sort()) await bumpActivityVersion(db, org);
}

/** Compiled once: every ingest transaction runs it (the gateway's, one per recorder flush). */
const bump = new QueryTemplate((db: Db, _shape, organizationId: string) =>
  db
    .insertInto("activity_versions")
    .values({ organization_id: organizationId, version: 1 })
    .onConflict((oc) =>
      oc.column("organization_id").doUpdateSet((eb) => ({
        version: eb("activity_versions.version", "+", 1),
      })),
    )
    .compile(),
);

/** The organization's current activity version (0 before any ingest). */
export async function readActivityVersion(db: Db, organizationId: string): Promise<bigint> {
  const row = await db
    .selectFrom("activity_versions")
    .select("version")
    .where("organization_id", "=", organizationId)
    .executeTakeFirst();
  return toBigInt(row?.version);
}
