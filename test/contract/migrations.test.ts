import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
  });
}
