import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderGenerationRecordDoc } from "../../src/activity/generation-record-doc.js";

const DOC = new URL("../../docs/generation-record.md", import.meta.url);

describe("docs/generation-record.md", () => {
  it("is the rendering of the field table (GATEHOUSE_UPDATE_DOCS=1 rewrites it)", () => {
    const fresh = renderGenerationRecordDoc();
    if (process.env.GATEHOUSE_UPDATE_DOCS === "1") writeFileSync(DOC, fresh);
    expect(readFileSync(DOC, "utf8")).toBe(fresh);
  });
});
