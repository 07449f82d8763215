import { describe, expect, it } from "vitest";
import { parseJsonResult } from "../../src/stores/clickhouse/clickhouse-values.js";

describe("parseJsonResult (ClickHouse JSON format)", () => {
  const doc = (n: number) => `{\n"meta": [{"name": "n", "type": "UInt8"}],\n"data": [{"n": ${n}}]\n}\n`;

  it("reads one document", () => {
    expect(parseJsonResult(doc(1))).toEqual({ meta: [{ name: "n", type: "UInt8" }], data: [{ n: 1 }] });
  });

  it("answers no rows for the empty body of a statement without a result set (DELETE, ALTER)", () => {
    expect(parseJsonResult("")).toEqual({ meta: [], data: [] });
    expect(parseJsonResult("\n")).toEqual({ meta: [], data: [] });
  });

  it("takes the last document when a failed query's partial output precedes it (chDB quirk)", () => {
    expect(parseJsonResult(`{\n"meta": [{"name": "x"`.concat("\n", doc(2))).data).toEqual([{ n: 2 }]);
  });

  it("refuses text that is no document", () => {
    expect(() => parseJsonResult("Code: 62. DB::Exception")).toThrow(SyntaxError);
  });
});
