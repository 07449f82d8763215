import { describe, expect, it } from "vitest";
import type { ExclusiveActivityWriter } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { activityRow, applyRows } from "../helpers/activity-stores.js";

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
      await applyRows(store.exclusive as ExclusiveActivityWriter, longer);
      const ids = (await store.query({ sql, params: {} }, { timeoutMs: 60_000 })).map((r) => r.id as string);
      expect(ids.filter((id) => id.startsWith("longer-id-")).sort()).toEqual(longer.map((r) => r.id).sort());
    } finally {
      await store.close();
    }
  });

  it("writes longer strings intact through the INSERT it keeps prepared per connection", async () => {
    // The column-text INSERT is prepared once per connection and reused across batches: each batch
    // must keep its strings whole however much longer they are than the previous batch's.
    const store = await openDuckDbActivityStore({ path: ":memory:" });
    try {
      const writer = store.exclusive as ExclusiveActivityWriter;
      const written: { id: string; model: string }[] = [];
      for (const [round, width] of [1, 40, 3_000].entries()) {
        const rows = Array.from({ length: 500 }, (_, i) =>
          activityRow({ id: `r${round}-${i}`, model: `m/${"x".repeat(width)}${i}` }),
        );
        // Sequential, so that each round reuses the previous round's connection and statement.
        await applyRows(writer, rows);
        written.push(...rows.map((r) => ({ id: r.id, model: r.model })));
      }
      const got = await store.query(
        { sql: "SELECT id, model FROM generations ORDER BY id", params: {} },
        { timeoutMs: 60_000 },
      );
      expect(got).toEqual([...written].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
    } finally {
      await store.close();
    }
  });
});
