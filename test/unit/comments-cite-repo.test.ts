import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The repository explains itself: source comments cite the project's own docs (docs/*.md), never
 * the specification files that live outside the repository, and every page and named section they
 * cite exists. The wire facts the code relies on are in docs/wire-compatibility.md.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const SOURCE_DIRS = ["src", "web/src"];

/** Names of specification files kept outside the repository, and the folder they came from. */
const OUTSIDE =
  /\b(?:dataplane|compatibility|broadcast|surfaces)-facts\b|\bdecisions\.md\b|\bmanagement-api\b|\bspec\//;

/** `docs/<page>.md`, optionally followed by a quoted section name (across a comment's line break). */
const CITATION = /(?<![\w./-])docs\/([\w-]+\.md)(?:[\s*]*"([^"\n]+)")?/g;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? files(join(dir, e.name))
      : /\.(ts|tsx|mts|js|mjs)$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
}

const sources = SOURCE_DIRS.flatMap((d) => files(join(ROOT, d))).map((path) => ({
  name: relative(ROOT, path),
  text: readFileSync(path, "utf8"),
}));

/** Each line that names an outside specification file, as `file:line: text`. */
function outsideCitations(name: string, text: string): string[] {
  return text
    .split("\n")
    .flatMap((line, i) => (OUTSIDE.test(line) ? [`${name}:${i + 1}: ${line.trim()}`] : []));
}

function citations(text: string): { page: string; section: string | undefined }[] {
  return [...text.matchAll(CITATION)].map((m) => ({ page: m[1] as string, section: m[2] }));
}

/** A page's section names: its headings, without the leading #s and backticks. */
function headings(markdown: string): Set<string> {
  return new Set(
    markdown
      .split("\n")
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => l.replace(/^#+ /, "").replaceAll("`", "").trim()),
  );
}

/**
 * Whether a page has the section a comment names: a heading that begins with the name, or a
 * paragraph or list item led by it in bold (`**Name`) or as a label (`Name:`).
 */
function hasSection(markdown: string, name: string): boolean {
  return markdown.split("\n").some((line) => {
    const l = line
      .replaceAll("`", "")
      .trim()
      .replace(/^[-*] +/, "");
    return (
      (/^#{1,6} /.test(l) && l.replace(/^#+ /, "").startsWith(name)) ||
      l.startsWith(`**${name}`) ||
      l.startsWith(`${name}:`)
    );
  });
}

describe("source comments cite the repository", () => {
  it("the scanners recognise what they look for", () => {
    expect(outsideCitations("a.ts", "/** Chat answers (dataplane-facts.md §4). */")).toHaveLength(1);
    expect(
      outsideCitations("a.ts", " * (compatibility-facts.md §D), (broadcast-facts.md §3.3)"),
    ).toHaveLength(1);
    expect(outsideCitations("a.ts", '// as decisions.md "Validation" says')).toHaveLength(1);
    expect(outsideCitations("a.ts", "// management-api.md operation 3; surfaces-facts.md §4.4")).toHaveLength(
      1,
    );
    expect(outsideCitations("a.ts", "/** The record of spec/activity.md. */")).toHaveLength(1);
    expect(outsideCitations("a.ts", "/** The key (compatibility-facts §F). */")).toHaveLength(1);
    expect(outsideCitations("a.ts", "/** As management-api section 1 says. */")).toHaveLength(1);
    expect(outsideCitations("a.ts", '/** (docs/wire-compatibility.md "Chat answers") */')).toEqual([]);
    expect(outsideCitations("a.ts", "/** (docs/activity.md, docs/api-notes.md) */")).toEqual([]);
    expect(citations('x (docs/broadcast.md\n * "Selection"). y docs/gateway.md, z')).toEqual([
      { page: "broadcast.md", section: "Selection" },
      { page: "gateway.md", section: undefined },
    ]);
    expect(citations("github.com/o/r/docs/specification.md")).toEqual([]);
    const page =
      "# T\n\n## Retry schedule and dead letters\n\n**Outbox (write amplification).** x\nToken counts: y\n";
    for (const name of ["Retry schedule", "Outbox (write amplification)", "Token counts"]) {
      expect(hasSection(page, name), name).toBe(true);
    }
    for (const name of ["Recording", "dead letters", "Token"])
      expect(hasSection(page, name), name).toBe(false);
  });

  it("no file under src/ or web/src cites a specification file from outside the repository", () => {
    expect(sources.length).toBeGreaterThan(100);
    const found = sources.flatMap((s) => outsideCitations(s.name, s.text));
    expect(found, "cite docs/wire-compatibility.md (or another docs/ page) instead").toEqual([]);
  });

  it("every docs/ page a source file cites exists", () => {
    const cited = sources.flatMap((s) => citations(s.text).map((c) => ({ file: s.name, ...c })));
    expect(cited.length).toBeGreaterThan(20);
    const missing = cited
      .filter((c) => !existsSync(join(ROOT, "docs", c.page)))
      .map((c) => `${c.file}: docs/${c.page}`);
    expect(missing).toEqual([]);
  });

  it("every section of docs/wire-compatibility.md a source file cites is a heading there", () => {
    const sections = headings(readFileSync(join(ROOT, "docs/wire-compatibility.md"), "utf8"));
    const cited = sources.flatMap((s) =>
      citations(s.text)
        .filter((c) => c.page === "wire-compatibility.md" && c.section !== undefined)
        .map((c) => ({ file: s.name, section: c.section as string })),
    );
    expect(cited.length).toBeGreaterThan(15);
    const unknown = cited.filter((c) => !sections.has(c.section)).map((c) => `${c.file}: "${c.section}"`);
    expect(unknown).toEqual([]);
  });

  it("every section of another docs/ page a source file cites is there", () => {
    const cited = sources.flatMap((s) =>
      citations(s.text)
        .filter((c) => c.page !== "wire-compatibility.md" && c.section !== undefined)
        .map((c) => ({ file: s.name, page: c.page, section: c.section as string })),
    );
    expect(cited.length).toBeGreaterThan(10);
    const unknown = cited
      .filter(
        (c) =>
          !existsSync(join(ROOT, "docs", c.page)) ||
          !hasSection(readFileSync(join(ROOT, "docs", c.page), "utf8"), c.section),
      )
      .map((c) => `${c.file}: docs/${c.page} "${c.section}"`);
    expect(unknown).toEqual([]);
  });
});
