import BetterSqlite3 from "better-sqlite3";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { jsonRows, jsonTexts } from "../../src/stores/sqlite/json-rows.js";

// The way the record store reads them: json_each over one bound text, 64-bit integers as bigint.
const db = new BetterSqlite3(":memory:");
db.defaultSafeIntegers(true);
afterAll(() => db.close());
const readRows = (json: string) =>
  db.prepare("SELECT value ->> 0 AS a, value ->> 1 AS b, value ->> 2 AS c FROM json_each(?)").all(json) as {
    a: unknown;
    b: unknown;
    c: unknown;
  }[];

describe("jsonRows / jsonTexts (many rows as one SQLite parameter)", () => {
  it("round-trips texts, 64-bit integers and null exactly through json_each", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.string({ unit: "grapheme" }),
            fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
            fc.option(fc.string(), { nil: null }),
          ),
          { maxLength: 20 },
        ),
        (rows) => {
          const json = jsonRows(rows);
          if (json === null) return; // only for texts JSON would escape as \u
          expect(readRows(json)).toEqual(rows.map(([a, b, c]) => ({ a, b, c })));
        },
      ),
    );
  });

  it("refuses what would not round-trip, so callers take their general statement", () => {
    expect(jsonRows([["lone \ud800 surrogate", 1n, null]])).toBeNull();
    expect(jsonRows([["control \u0001", 1n, null]])).toBeNull();
    expect(jsonRows([["x", 2n ** 63n, null]])).toBeNull();
    expect(jsonRows([["x", 1.5, null]])).toBeNull();
    expect(jsonTexts(["ok", "\ud800"])).toBeNull();
    expect(jsonTexts(['quote " and \\ backslash', "😀"])).toBe(
      JSON.stringify(['quote " and \\ backslash', "😀"]),
    );
  });
});
