/**
 * The save-time check of a custom content filter's pattern (docs/guardrails.md "Custom filter
 * patterns"): a filter runs on every prompt of the requests its guardrail governs, so a pattern
 * that can backtrack catastrophically would let one prompt stall the gateway. `checkPattern`
 * compiles the pattern with CONTENT_FILTER_FLAGS (and runs it once: V8 refuses a pattern too large
 * to compile only then), then reads it with a small parser (escapes, character classes, groups,
 * quantifiers) and refuses:
 * - lookarounds (`(?=`, `(?!`, `(?<=`, `(?<!`) and backreferences (`\1`, `\k<name>`);
 * - nested quantifiers: a group repeated more than once (`+`, `*`, `{2,}`, `{3}`) that contains a
 *   quantifier of variable count (`+`, `*`, `?`, `{1,3}`), e.g. `(a+)+`, `(\w+\s?)*`;
 * - ambiguous repetition: a repeated group in which one way through a repetition can match the
 *   start of what another way matches (`(a|aa)+`, `(\d|\w)+`, `(a|ab)+`), so a text could be
 *   split into repetitions more than one way; `(ab|cd)+` or `(x1|x2)+` split one way only;
 * - a pattern that can match the empty string (it would match every text, at every position);
 * - groups nested deeper than MAX_GROUP_DEPTH, and repeated groups with more than MAX_SEQUENCES
 *   ways through one repetition (too many to compare).
 * Whether two character sets overlap is decided exactly for a literal character, and for two
 * classes on a sample of characters (ASCII, Latin-1 and a few letters, digits and spaces of other
 * scripts).
 */

/** The flags every custom content filter is compiled with (global scan, Unicode syntax). */
export const CONTENT_FILTER_FLAGS = "gu";

/** Groups nested deeper than this are refused (and the analysis never recurses further). */
export const MAX_GROUP_DEPTH = 100;

/** Ways through one repetition of a group the ambiguity check compares at most. */
export const MAX_SEQUENCES = 256;

/** Characters of each way the ambiguity check compares (longer ways alike so far count as alike). */
const MAX_SEQUENCE_ATOMS = 24;

interface Atom {
  kind: "atom";
  /** Source text that matches exactly this one character (compiled with `u` to test it). */
  source: string;
  /** The character, when the atom is a plain literal (compared without a regex). */
  literal: string | null;
}
interface Assertion {
  kind: "assertion";
}
interface Group {
  kind: "group";
  alternatives: Item[][];
  /** 0-based position of its `(`. */
  at: number;
}
interface Item {
  node: Atom | Assertion | Group;
  min: number;
  max: number;
  /** 0-based position of its quantifier, or -1 when it has none. */
  quantAt: number;
  quantText: string;
}

class Refusal extends Error {}

const refuse = (reason: string): never => {
  throw new Refusal(reason);
};

/** 1-based character position for messages. */
const pos = (i: number) => `character ${i + 1}`;

/** Length of the escape starting at `i` (`p[i]` is the backslash), in a valid `u` pattern. */
function escapeLength(p: string, i: number): number {
  const c = p[i + 1];
  if (c === "u" && p[i + 2] === "{") return p.indexOf("}", i) - i + 1;
  if (c === "u") return 6;
  if (c === "x") return 4;
  if (c === "c") return 3;
  if ((c === "p" || c === "P") && p[i + 2] === "{") return p.indexOf("}", i) - i + 1;
  // A supplementary character escaped by identity is not valid in `u` mode; one code unit.
  return 2;
}

/** The group header's length at `i` (`p[i]` is `(`), or refuses a lookaround. */
function groupHeader(p: string, i: number): number {
  if (p[i + 1] !== "?") return 1;
  const next = p[i + 2];
  if (next === "=") refuse(`uses a lookahead ((?= at ${pos(i)}); lookarounds are not allowed`);
  if (next === "!") refuse(`uses a negative lookahead ((?! at ${pos(i)}); lookarounds are not allowed`);
  if (next === "<" && p[i + 3] === "=")
    refuse(`uses a lookbehind ((?<= at ${pos(i)}); lookarounds are not allowed`);
  if (next === "<" && p[i + 3] === "!")
    refuse(`uses a negative lookbehind ((?<! at ${pos(i)}); lookarounds are not allowed`);
  if (next === ":") return 3;
  if (next === "<") return p.indexOf(">", i) - i + 1; // a named group
  return p.indexOf(":", i) - i + 1; // modifiers, `(?i:` (newer engines)
}

/** The quantifier at `i` as [min, max, length], or null when there is none. */
function quantifierAt(p: string, i: number): [number, number, number] | null {
  const c = p[i];
  let min: number;
  let max: number;
  let len: number;
  if (c === "*") [min, max, len] = [0, Infinity, 1];
  else if (c === "+") [min, max, len] = [1, Infinity, 1];
  else if (c === "?") [min, max, len] = [0, 1, 1];
  else if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i, i + 64));
    if (!m) return null;
    min = Number(m[1]);
    max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
    len = m[0].length;
  } else return null;
  if (p[i + len] === "?") len++; // lazy
  return [min, max, len];
}

/** Parses a pattern already known to compile with `u`; refuses what cannot be made safe. */
function parse(p: string): Group {
  const root: Group = { kind: "group", alternatives: [[]], at: -1 };
  const stack: Group[] = [root];
  let i = 0;
  const current = () => stack[stack.length - 1]!;
  const push = (node: Item["node"]) => {
    const alts = current().alternatives;
    alts[alts.length - 1]!.push({ node, min: 1, max: 1, quantAt: -1, quantText: "" });
  };
  while (i < p.length) {
    const c = p[i]!;
    if (c === "\\") {
      const e = p[i + 1]!;
      if (/[1-9]/.test(e)) {
        const digits = /^\d+/.exec(p.slice(i + 1))![0];
        refuse(`uses a backreference (\\${digits} at ${pos(i)}); backreferences are not allowed`);
      }
      if (e === "k") refuse(`uses a backreference (\\k<…> at ${pos(i)}); backreferences are not allowed`);
      if (e === "b" || e === "B") {
        push({ kind: "assertion" });
        i += 2;
        continue;
      }
      const len = escapeLength(p, i);
      const source = p.slice(i, i + len);
      push({ kind: "atom", source, literal: null });
      i += len;
    } else if (c === "[") {
      let j = i + 1;
      if (p[j] === "^") j++;
      while (p[j] !== "]") j += p[j] === "\\" ? 2 : 1;
      push({ kind: "atom", source: p.slice(i, j + 1), literal: null });
      i = j + 1;
    } else if (c === "(") {
      const len = groupHeader(p, i);
      if (stack.length > MAX_GROUP_DEPTH) refuse(`nests groups deeper than ${MAX_GROUP_DEPTH} levels`);
      const g: Group = { kind: "group", alternatives: [[]], at: i };
      push(g);
      stack.push(g);
      i += len;
    } else if (c === ")") {
      stack.pop();
      i++;
    } else if (c === "|") {
      current().alternatives.push([]);
      i++;
    } else if (c === "^" || c === "$") {
      push({ kind: "assertion" });
      i++;
    } else {
      const q = quantifierAt(p, i);
      if (q) {
        const alts = current().alternatives;
        const item = alts[alts.length - 1]!.at(-1)!;
        [item.min, item.max] = [q[0], q[1]];
        item.quantAt = i;
        item.quantText = p.slice(i, i + q[2]);
        i += q[2];
        continue;
      }
      const ch = String.fromCodePoint(p.codePointAt(i)!);
      push(
        c === "." ? { kind: "atom", source: ".", literal: null } : { kind: "atom", source: ch, literal: ch },
      );
      i += ch.length;
    }
  }
  return root;
}

const nullableNode = (n: Item["node"]): boolean =>
  n.kind === "assertion" || (n.kind === "group" && n.alternatives.some((alt) => alt.every(nullable)));
const nullable = (it: Item): boolean => it.min === 0 || nullableNode(it.node);

/** The first item (depth first) inside a group whose count varies, or null. */
function variableQuantifier(g: Group): Item | null {
  for (const alt of g.alternatives) {
    for (const it of alt) {
      if (it.quantAt >= 0 && it.min !== it.max) return it;
      if (it.node.kind === "group") {
        const inner = variableQuantifier(it.node);
        if (inner) return inner;
      }
    }
  }
  return null;
}

/** Characters overlap tests are run on (see the module's comment). */
const SAMPLES: string[] = (() => {
  const cps: number[] = [];
  for (let c = 0; c <= 0x7f; c++) cps.push(c);
  for (let c = 0xa0; c <= 0xff; c++) cps.push(c);
  cps.push(0x100, 0x17f, 0x391, 0x3b1, 0x416, 0x436, 0x5d0, 0x627, 0x660, 0x905, 0x966);
  cps.push(0x1680, 0x2000, 0x200b, 0x2028, 0x2029, 0x3000, 0x3042, 0x30a2, 0x4e2d, 0xac00, 0xfeff, 0xff10);
  cps.push(0xff21, 0x1d400, 0x1f600);
  return cps.map((c) => String.fromCodePoint(c));
})();

/** Compiled one-character matchers and their sample bitmaps, kept for one check. */
class Matchers {
  private readonly compiled = new Map<string, RegExp>();
  /** Per class source: which SAMPLES it matches, one bit each. */
  private readonly bitmaps = new Map<string, Uint32Array>();

  test(source: string, ch: string): boolean {
    let re = this.compiled.get(source);
    if (!re) {
      re = new RegExp(`^(?:${source})$`, "u");
      this.compiled.set(source, re);
    }
    return re.test(ch);
  }

  private bitmap(source: string): Uint32Array {
    let b = this.bitmaps.get(source);
    if (!b) {
      b = new Uint32Array(Math.ceil(SAMPLES.length / 32));
      SAMPLES.forEach((s, k) => {
        if (this.test(source, s)) b![k >>> 5]! |= 1 << (k & 31);
      });
      this.bitmaps.set(source, b);
    }
    return b;
  }

  /** Whether some character matches both atoms (for two classes: some sample character). */
  overlap(a: Atom, b: Atom): boolean {
    if (a.literal !== null && b.literal !== null) return a.literal === b.literal;
    if (a.literal !== null) return this.test(b.source, a.literal);
    if (b.literal !== null) return this.test(a.source, b.literal);
    if (a.source === b.source) return true;
    const x = this.bitmap(a.source);
    const y = this.bitmap(b.source);
    return x.some((w, k) => (w & y[k]!) !== 0);
  }
}

const tooManyWays = (at: number): never =>
  refuse(
    `has a repeated group (${pos(at)}) with more than ${MAX_SEQUENCES} ways through one repetition, too many to check`,
  );

/** Atoms of one way through a repeated group, cut at MAX_SEQUENCE_ATOMS. */
type Sequence = Atom[];

/**
 * Every way through `alt` as a sequence of one-character atoms (assertions left out, fixed counts
 * unrolled), each cut at MAX_SEQUENCE_ATOMS; refuses when there are more than MAX_SEQUENCES.
 * Inside a repeated group every count is fixed (a variable one was refused before).
 */
function sequences(alt: Item[], at: number): Sequence[] {
  let acc: Sequence[] = [[]];
  for (const it of alt) {
    if (acc.every((s) => s.length >= MAX_SEQUENCE_ATOMS)) break;
    const n = it.node;
    if (n.kind === "assertion") continue;
    const options: Sequence[] =
      n.kind === "atom" ? [[n]] : n.alternatives.flatMap((inner) => sequences(inner, at));
    for (let r = 0; r < Math.min(it.min, MAX_SEQUENCE_ATOMS); r++) {
      const next: Sequence[] = [];
      for (const s of acc) {
        if (s.length >= MAX_SEQUENCE_ATOMS) next.push(s);
        else for (const o of options) next.push([...s, ...o].slice(0, MAX_SEQUENCE_ATOMS));
      }
      if (next.length > MAX_SEQUENCES) tooManyWays(at);
      acc = next;
    }
  }
  return acc;
}

/** Whether two ways through a group can match the start of the same text (one a prefix of the other). */
function compatible(a: Sequence, b: Sequence, m: Matchers): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (!m.overlap(a[i]!, b[i]!)) return false;
  return true;
}

const shown = (s: Sequence) => (s.length === 0 ? "(nothing)" : s.map((a) => a.source).join(""));

/**
 * Refuses a repeated group whose ways through one repetition are not a prefix code: when no way
 * can match a prefix of what another matches, the text splits into repetitions one way only
 * (linear matching); otherwise the splits can multiply, as in `(a|aa)+`.
 */
function checkUnambiguous(g: Group, m: Matchers): void {
  const all = g.alternatives.flatMap((alt) => sequences(alt, g.at));
  if (all.length > MAX_SEQUENCES) tooManyWays(g.at);
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      if (compatible(all[i]!, all[j]!, m)) {
        refuse(
          `has a repeated group (${pos(g.at)}) that can split a text into repetitions more than one way ` +
            `(${shown(all[i]!)} and ${shown(all[j]!)} can match the same characters), which can backtrack ` +
            "catastrophically: make sure no alternative can match the start of what another matches",
        );
      }
    }
  }
}

/** Every repeated group: no variable quantifier inside, no alternatives that start alike. */
function checkRepetitions(g: Group, m: Matchers): void {
  for (const alt of g.alternatives) {
    for (const it of alt) {
      if (it.node.kind !== "group") continue;
      if (it.max > 1) {
        const inner = variableQuantifier(it.node);
        if (inner) {
          refuse(
            `nests quantifiers: the group at ${pos(it.node.at)} repeats (${it.quantText}) and contains ` +
              `a variable quantifier (${inner.quantText} at ${pos(inner.quantAt)}), which can backtrack catastrophically`,
          );
        }
        checkUnambiguous(it.node, m);
      } else {
        checkRepetitions(it.node, m);
      }
    }
  }
}

/** V8's message without the pattern it echoes: "Invalid regular expression: /…/u: Unterminated group". */
function syntaxReason(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  const cut = msg.lastIndexOf(": ");
  return cut >= 0 ? msg.slice(cut + 2) : msg;
}

/**
 * Null when a custom content filter's pattern is safe to run on every prompt; otherwise why not
 * (a sentence fragment that follows the field's name: `content_filters[0].pattern: <reason>`).
 */
export function checkPattern(pattern: string): string | null {
  let re: RegExp;
  try {
    re = new RegExp(pattern, CONTENT_FILTER_FLAGS);
  } catch (err) {
    return `is not a valid JavaScript regular expression (flags "${CONTENT_FILTER_FLAGS}"): ${syntaxReason(err)}`;
  }
  try {
    // V8 compiles a pattern when it first runs, and only then finds it too large to compile.
    re.test("");
  } catch (err) {
    return `cannot be compiled: ${syntaxReason(err)}`;
  }
  try {
    const root = parse(pattern);
    checkRepetitions(root, new Matchers());
    if (nullableNode(root)) return "can match the empty string, so it would match every text";
    return null;
  } catch (err) {
    if (err instanceof Refusal) return err.message;
    throw err;
  }
}
