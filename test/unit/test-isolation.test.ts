import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/**
 * vitest.config.ts runs test files without isolation (one module cache per worker, for speed). What
 * a file changes in a module's state would reach the files the same worker runs after it: module
 * mocks and stubbed globals or environment variables are the ways a test does that on purpose.
 */
describe("test files run without isolation", () => {
  it("no test file mocks a module or stubs a global or the environment", () => {
    const offenders: string[] = [];
    const pattern = /\bvi\.(mock|doMock|stubGlobal|stubEnv|hoisted)\(/;
    for (const file of tsFiles(join(ROOT, "test"))) {
      if (file === import.meta.filename) continue;
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((line, i) => {
        if (pattern.test(line)) offenders.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
