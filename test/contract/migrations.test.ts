import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  insertOrganization,
  organizationCreditLine,
  setOrganizationCreditLine,
} from "../../src/domain/organizations/organization-repo.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

/** The record store's schema after every migration has run, on both engines. */
for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`migrations on ${f.name}`, () => {
    let store: Awaited<ReturnType<typeof f.open>>;
    beforeAll(async () => {
      store = await f.open();
    });
    afterAll(() => store?.dispose());

    it("005 drops the in-flight markers table of the replaced ingest protocol; the buffer table stays", async () => {
      const tables = await store.db.introspection.getTables();
      const names = tables.map((t) => t.name);
      expect(names).not.toContain("ingest_inflight");
      expect(names).toContain("ingest_buffer");
      const applied = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(
        store.db,
      );
      expect(applied.rows.map((r) => r.name)).toContain("005-drop-ingest-inflight");
    });

    it("013 gives organizations a nullable credit_line_nano, null until set, holding 64-bit nano-USD", async () => {
      const orgs = (await store.db.introspection.getTables()).find((t) => t.name === "organizations");
      const col = orgs?.columns.find((c) => c.name === "credit_line_nano");
      expect(col?.isNullable).toBe(true);
      const id = "012c0000-0000-4000-8000-000000000000";
      await insertOrganization(store.db, { id, name: "credit line", now: new Date() });
      expect(await organizationCreditLine(store.db, id)).toBeNull();
      // 1e9 USD, the most the CLI accepts, needs 64 bits.
      expect(await setOrganizationCreditLine(store.db, id, 1_000_000_000_000_000_000n)).toBe(true);
      expect(await organizationCreditLine(store.db, id)).toBe(1_000_000_000_000_000_000n);
      expect(await setOrganizationCreditLine(store.db, id, null)).toBe(true);
      expect(await organizationCreditLine(store.db, id)).toBeNull();
      expect(await organizationCreditLine(store.db, "012c0000-0000-4000-8000-000000000001")).toBeUndefined();
      expect(await setOrganizationCreditLine(store.db, "012c0000-0000-4000-8000-000000000001", 5n)).toBe(
        false,
      );
    });
  });
}
