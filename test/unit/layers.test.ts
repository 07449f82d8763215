import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Imports point down (docs/architecture.md "Layers"): a file may import, for its values, only
 * from its own layer or the layers below. `import type` is erased at compile time and may point
 * anywhere (a port's implementation names the port's types). Between the top-level folders there
 * is no cycle of value imports, in a layer either.
 */
const ROOT = resolve(import.meta.dirname, "../..");

/** Top to bottom; each entry is one layer: the top-level folders (or files) of src/ in it. */
const LAYERS: readonly (readonly string[])[] = [
  ["main.ts", "warm-up.ts", "config", "cli"],
  ["http"],
  ["gateway"],
  ["broadcast", "analytics", "demo", "metrics"],
  ["domain"],
  ["stores"],
  ["activity"],
  ["lib"],
];

const layerOf = new Map(LAYERS.flatMap((names, i) => names.map((n) => [n, i] as const)));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|mts)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

interface ImportLine {
  /** The module specifier as written. */
  from: string;
  /** `import type` / `export type`: erased, no module is loaded. */
  typeOnly: boolean;
}

/**
 * Every static import and re-export of a source, and its dynamic imports of literal specifiers.
 * Only `import type` is type-only: under verbatimModuleSyntax `import { type A }` still loads its
 * module.
 */
function importsOf(source: string): ImportLine[] {
  const out: ImportLine[] = [];
  const forms = [
    /^import\s+(type\s+)?(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+)?\s*from\s*["']([^"']+)["']/gm,
    /^export\s+(type\s+)?(?:\{[^}]*\}|\*(?:\s*as\s+[\w$]+)?)\s*from\s*["']([^"']+)["']/gm,
  ];
  for (const re of forms) {
    for (const m of source.matchAll(re)) out.push({ from: m[2] as string, typeOnly: Boolean(m[1]) });
  }
  for (const m of source.matchAll(/^import\s*["']([^"']+)["']/gm))
    out.push({ from: m[1] as string, typeOnly: false });
  for (const m of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    out.push({ from: m[1] as string, typeOnly: false });
  }
  return out;
}

/** The top-level folder (or file) of src/ a path is in: "domain", "main.ts". */
const topOf = (relToSrc: string): string => relToSrc.split("/")[0] as string;

interface Edge {
  file: string;
  from: string;
  source: string;
  target: string;
}

/** The value imports between different top-level folders of src/. */
function valueEdges(): Edge[] {
  const src = join(ROOT, "src");
  const edges: Edge[] = [];
  for (const file of files(src)) {
    const rel = relative(src, file).split("\\").join("/");
    for (const imp of importsOf(readFileSync(file, "utf8"))) {
      if (imp.typeOnly || !imp.from.startsWith(".")) continue;
      const target = relative(src, resolve(dirname(file), imp.from))
        .split("\\")
        .join("/");
      if (target.startsWith("..")) continue; // outside src/ (none today)
      const [a, b] = [topOf(rel), topOf(target).replace(/\.js$/, ".ts")];
      if (a !== b) edges.push({ file: `src/${rel}`, from: imp.from, source: a, target: b });
    }
  }
  return edges;
}

describe("imports point down the layers", () => {
  it("the scanner reads each form of import, and only `import type` as type-only", () => {
    const source = [
      'import { a } from "./a.js";',
      'import type { B } from "../b.js";',
      'import d, {\n  e,\n  type F,\n} from "./d.js";',
      'import { type G } from "./g.js";',
      'import * as h from "./h.js";',
      'import "./side-effect.js";',
      'export { i } from "./i.js";',
      'export type { J } from "./j.js";',
      'export * from "./k.js";',
      'const l = await import("./l.js");',
      'const text = "import { m } from \\"./m.js\\"";',
    ].join("\n");
    const found = importsOf(source)
      .map((i) => `${i.from}${i.typeOnly ? " (type)" : ""}`)
      .sort();
    expect(found).toEqual([
      "../b.js (type)",
      "./a.js",
      "./d.js",
      "./g.js",
      "./h.js",
      "./i.js",
      "./j.js (type)",
      "./k.js",
      "./l.js",
      "./side-effect.js",
    ]);
  });

  it("every top-level folder and file of src/ has a layer", () => {
    const unplaced = readdirSync(join(ROOT, "src"))
      .filter((n) => !n.endsWith(".d.ts"))
      .filter((n) => !layerOf.has(n));
    expect(unplaced, "place them in LAYERS and in docs/architecture.md").toEqual([]);
  });

  it("no value import runs up the layers", () => {
    const upward = valueEdges()
      .filter((e) => (layerOf.get(e.target) ?? -1) < (layerOf.get(e.source) ?? -1))
      .map((e) => `${e.file} imports ${e.from} (${e.source} → ${e.target})`);
    expect(upward).toEqual([]);
  });

  it("no cycle of value imports between top-level folders", () => {
    const next = new Map<string, Map<string, Edge>>();
    for (const e of valueEdges()) {
      const m = next.get(e.source) ?? new Map<string, Edge>();
      if (!m.has(e.target)) m.set(e.target, e);
      next.set(e.source, m);
    }
    const cycles: string[] = [];
    // A path back to its start, from each folder (folders are few: a plain search).
    const search = (start: string, at: string, path: Edge[], seen: Set<string>) => {
      for (const [to, e] of next.get(at) ?? []) {
        if (to === start) {
          cycles.push([...path, e].map((p) => `${p.file} imports ${p.from}`).join(" → "));
        } else if (!seen.has(to) && to > start) {
          seen.add(to);
          search(start, to, [...path, e], seen);
        }
      }
    };
    for (const start of next.keys()) search(start, start, [], new Set());
    expect(cycles).toEqual([]);
  });
});
