import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every package the code imports is declared in package.json: production code (src/, bin/) in
 * `dependencies`, so that it runs after `npm prune --omit=dev`; benches in either list. A package
 * installed only as someone else's dependency can vanish with that dependency's next release.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Files of src/ that production never loads, and the development packages they may import. */
const DEV_ONLY_FILES: Record<string, string> = {
  // Loaded only when the ingest pool runs from TypeScript sources (tsx, vitest); compiled, the
  // pool starts prepare-worker.js directly.
  "src/domain/ingest/workers/prepare-worker-boot.mjs": "tsx",
  // The in-process ClickHouse adapter of the test suites; no production module imports it.
  "src/stores/clickhouse/chdb-store.ts": "chdb",
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|mjs|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Bare package names of a file's static and dynamic imports (`@scope/name`, or `name`). */
function packagesOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specs = [
    // static imports and re-exports, from the start of a line, possibly over several lines
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+"([^"]+)"/gm),
    // side-effect imports, and dynamic imports with a literal specifier
    ...text.matchAll(/^\s*import\s+"([^"]+)"/gm),
    ...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
  ].map((m) => m[1]!);
  return specs
    .filter((s) => !s.startsWith(".") && !s.startsWith("node:") && !builtinModules.includes(s))
    .map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!));
}

const imports = (dirs: string[]) =>
  dirs.flatMap((d) =>
    files(join(ROOT, d)).flatMap((f) => packagesOf(f).map((p) => ({ file: relative(ROOT, f), p }))),
  );

describe("package.json declares every imported package", () => {
  it("finds the imports it checks (the scan is not vacuous)", () => {
    const found = new Set(imports(["src"]).map((i) => i.p));
    for (const p of ["fastify", "kysely", "secure-json-parse", "@duckdb/node-api"])
      expect(found).toContain(p);
  });

  it("src/ and bin/ import only `dependencies` (dev-only files excepted, each named)", () => {
    const missing = imports(["src", "bin"]).filter(
      ({ file, p }) => !(p in pkg.dependencies) && DEV_ONLY_FILES[file] !== p,
    );
    expect(missing).toEqual([]);
    for (const p of Object.values(DEV_ONLY_FILES)) expect(pkg.devDependencies).toHaveProperty(p);
  });

  it("no production module imports a dev-only file", () => {
    const names = Object.keys(DEV_ONLY_FILES).map((f) => f.split("/").pop()!.replace(/\.ts$/, ".js"));
    const offenders = files(join(ROOT, "src")).filter((f) => {
      const text = readFileSync(f, "utf8");
      return names.some((n) => new RegExp(`from "[^"]*/${n.replace(".", "\\.")}"`).test(text));
    });
    expect(offenders.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it("bench/ and test/ import only declared packages", () => {
    const declared = { ...pkg.dependencies, ...pkg.devDependencies };
    expect(imports(["bench", "test"]).filter(({ p }) => !(p in declared))).toEqual([]);
  });
});
