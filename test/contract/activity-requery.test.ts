import { describe, expect, it } from "vitest";
import type { ExclusiveActivityWriter } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { activityRow } from "../helpers/activity-stores.js";

describe("DuckDB activity store: repeated queries", () => {
  it("answers a repeated query with the strings written since its last run intact", async () => {
    // A DuckDB statement kept prepared across appends sized its sort keys by the strings of the
    // moment and returned longer new ids cut short (1.5.6): the store must plan every query anew.
    const store = await openDuckDbActivityStore({ path: ":memory:" });
    try {
      const sql = "SELECT id FROM generations ORDER BY organization_id, id";
      await store.insert(
        Array.from({ length: 3_000 }, (_, i) => activityRow({ id: `s-${i}` })),
        [],
      );
      await store.query({ sql, params: {} }, { timeoutMs: 60_000 });
      const longer = Array.from({ length: 3_000 }, (_, i) => activityRow({ id: `longer-id-${i}` }));
      const staged = await (store.exclusive as ExclusiveActivityWriter).stage(longer, []);
      await staged.commit();
      const ids = (await store.query({ sql, params: {} }, { timeoutMs: 60_000 })).map((r) => r.id as string);
      expect(ids.filter((id) => id.startsWith("longer-id-")).sort()).toEqual(longer.map((r) => r.id).sort());
    } finally {
      await store.close();
    }
  });
});
