import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { apiTypesSource } from "../../web/scripts/write-api-types.js";

describe("dashboard API types", () => {
  it("are the types of the server's current OpenAPI document (run npm run build:web after an API change)", async () => {
    const committed = readFileSync(resolve(import.meta.dirname, "../../web/src/api/schema.gen.ts"), "utf8");
    expect(committed).toBe(await apiTypesSource());
  });
});
