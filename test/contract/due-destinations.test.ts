import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DUE_ROWS_PER_DESTINATION, dueDestinations } from "../../src/broadcast/outbox/due-destinations.js";
import { insertDestination } from "../../src/domain/destinations/destination-repo.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { systemClock } from "../../src/lib/clock.js";
import { destinationRow } from "../helpers/destination-configs.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

/**
 * The Broadcast worker's poll for destinations with deliveries due (due-destinations.ts), on both
 * engines; on PostgreSQL also in its `lateral` form, which reads at most DUE_ROWS_PER_DESTINATION
 * of each destination's due rows (a down destination's backlog is not read on every poll) and
 * otherwise answers the same.
 */
for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`due destinations on ${f.name}`, () => {
    let store: Awaited<ReturnType<typeof f.open>>;
    const now = Date.now();
    beforeAll(async () => {
      store = await f.open();
      const { organizationId, workspaceId } = await createOrganization(store, systemClock, "due");
      const at = new Date(now).toISOString();
      for (const [id, enabled] of [
        ["backlog", 1],
        ["few", 1],
        ["off", 0],
      ] as const) {
        await insertDestination(
          store.db,
          destinationRow({ id, organizationId, workspaceId, type: "webhook", at, enabled: enabled === 1 }),
        );
      }
      const row = (destination: string, i: number, nextAttempt: number) => ({
        destination_id: destination,
        organization_id: organizationId,
        batch_seq: i,
        ids: "[]",
        item_count: 2,
        min_created_ms: now - 10_000 + i,
        max_created_ms: now - 10_000 + i,
        state: "pending",
        attempts: 0,
        created_at_ms: now - 10_000 + i,
        next_attempt_ms: nextAttempt,
        lease_owner: null,
        lease_until_ms: null,
        last_error: null,
        finished_at_ms: null,
      });
      const rows = [
        // 300 due and 300 backing off for the backlog; 3 due for "few"; 5 due for a disabled one.
        ...Array.from({ length: 300 }, (_, i) => row("backlog", i, now - 1_000)),
        ...Array.from({ length: 300 }, (_, i) => row("backlog", 300 + i, now + 60_000)),
        ...Array.from({ length: 3 }, (_, i) => row("few", 600 + i, now - 1_000)),
        ...Array.from({ length: 5 }, (_, i) => row("off", 700 + i, now - 1_000)),
      ];
      for (let i = 0; i < rows.length; i += 100) {
        await store.db
          .insertInto("broadcast_deliveries")
          .values(rows.slice(i, i + 100))
          .execute();
      }
    });
    afterAll(() => store?.dispose());

    const byId = (due: Awaited<ReturnType<typeof dueDestinations>>) =>
      Object.fromEntries(due.map((d) => [d.id, d.pending]));

    it("lists the enabled destinations with rows due, counting their due rows' generations", async () => {
      expect(byId(await dueDestinations(store.db, now, 200))).toEqual({ backlog: 600, few: 6 });
    });

    // The lateral form is PostgreSQL's (SQLite has no LATERAL).
    if (f.name === "postgres")
      it("lateral: the same destinations, each counted over at most DUE_ROWS_PER_DESTINATION rows", async () => {
        expect(byId(await dueDestinations(store.db, now, 200, null, true))).toEqual({
          backlog: 2 * DUE_ROWS_PER_DESTINATION,
          few: 6,
        });
      });
  });
}
