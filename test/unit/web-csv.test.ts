import { describe, expect, it } from "vitest";
import { csvCell, toCsv } from "../../web/src/lib/csv.js";

/** The dashboard's CSV export (web/src/lib/csv.ts): RFC 4180 cells that no spreadsheet runs. */
describe("dashboard CSV export", () => {
  it.each([
    ['=HYPERLINK("http://127.0.0.1/x","click")', `"'=HYPERLINK(""http://127.0.0.1/x"",""click"")"`],
    ["+1+2", "'+1+2"],
    ["-2+3", "'-2+3"],
    ["@SUM(A1:A2)", "'@SUM(A1:A2)"],
    ["\t=1+1", "'\t=1+1"],
    ["\r=1+1", `"'\r=1+1"`],
  ])("a text starting like a formula is prefixed with ': %j", (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it("leaves ordinary texts, numbers (negative ones too) and empty cells as they are", () => {
    expect(csvCell("my-app")).toBe("my-app");
    expect(csvCell("a=b")).toBe("a=b");
    expect(csvCell(-1.5)).toBe("-1.5");
    expect(csvCell(0.25)).toBe("0.25");
    expect(csvCell(null)).toBe("");
    expect(csvCell('say "hi", twice')).toBe('"say ""hi"", twice"');
  });

  it("neutralises formulas in the header and in every row", () => {
    const csv = toCsv(
      ["app", "total_usage"],
      [
        { app: "=cmd|' /C calc'!A0", total_usage: 0.5 },
        { app: "ok", total_usage: -0.25 },
      ],
    );
    expect(csv.split("\r\n")).toEqual(["app,total_usage", "'=cmd|' /C calc'!A0,0.5", "ok,-0.25"]);
    expect(toCsv(["=x"], [])).toBe("'=x");
  });
});
