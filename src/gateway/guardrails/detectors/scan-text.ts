/**
 * What the built-in detectors share. A detector appends what it found to a flat list of
 * `start, end` pairs (UTF-16 offsets, end exclusive), which costs no object per match.
 *
 * Speed (docs/performance.md "Guardrail content scan"): V8 finds a literal string quickly (with
 * `indexOf`, or a regex that starts with one), by searching for its first character, the faster
 * the rarer that character is; a regex that starts with a class or alternatives is tried at
 * every position (about 0.7 ns a character: 70 µs per 100 KB). So detectors jump between
 * occurrences of an uncommon anchor (`@`, `:`, a capital letter, a short word) and match around
 * it, or lead with fixed digits (`\d{3}-`), which V8 skips through quickly too.
 */
export type Spans = number[];

export interface Detector {
  /** Appends each match in the text as a `start, end` pair, in any order (overlaps: see distinct). */
  find(t: ScanText, out: Spans): void;
}

/**
 * The spans one detector found, in order, without those that overlap an earlier one (an IPv4
 * tail inside an IPv6 address, a number two phone shapes match): each match counts once.
 */
export function distinct(found: Spans): Spans {
  if (found.length === 2) return found;
  const pairs: [number, number][] = [];
  for (let i = 0; i < found.length; i += 2) pairs.push([found[i]!, found[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const out: Spans = [];
  for (const [start, end] of pairs)
    if (out.length === 0 || start >= out[out.length - 1]!) out.push(start, end);
  return out;
}

/** One text being scanned, with its lower-case form computed once, when a detector asks. */
export class ScanText {
  private low: string | undefined;
  constructor(readonly text: string) {}

  /**
   * The text in lower case, offset for offset: U+0130 (İ), the one character whose lower case is
   * two (`i` and a combining dot), becomes `i`.
   */
  lower(): string {
    if (this.low === undefined) {
      const l = this.text.toLowerCase();
      this.low = l.length === this.text.length ? l : this.text.replaceAll("\u0130", "i").toLowerCase();
    }
    return this.low;
  }
}

export const isDigit = (c: number): boolean => c >= 48 && c <= 57;
export const isAsciiLetter = (c: number): boolean => (c | 32) >= 97 && (c | 32) <= 122;
export const isHexDigit = (c: number): boolean => isDigit(c) || ((c | 32) >= 97 && (c | 32) <= 102);
/** ASCII letter, digit or underscore (NaN, past either end of a text, is none). */
export const isWordCode = (c: number): boolean => isDigit(c) || isAsciiLetter(c) || c === 95;

/** Every offset of `needle` in `s`, in order. */
export function eachIndex(s: string, needle: string, visit: (i: number) => void): void {
  for (let i = s.indexOf(needle); i !== -1; i = s.indexOf(needle, i + 1)) visit(i);
}

/**
 * Each match of a sticky regex tried `back` characters before each occurrence of `anchor` (a
 * match is not looked for again inside the previous one).
 */
export function eachAnchored(
  s: string,
  anchor: string,
  back: number,
  re: RegExp,
  visit: (m: RegExpExecArray) => void,
): void {
  let floor = 0;
  for (let i = s.indexOf(anchor); i !== -1; i = s.indexOf(anchor, Math.max(i + 1, floor))) {
    if (i - back < floor) continue;
    re.lastIndex = i - back;
    const m = re.exec(s);
    if (m !== null && m[0].length > 0) {
      visit(m);
      floor = m.index + m[0].length;
    }
  }
}

/**
 * Each match of a global regex, with a guard against a zero-length match (which `exec` would
 * return again and again at the same offset): the search moves on one character (one code point
 * with the `u` flag), and the empty match is not reported.
 */
export function eachMatch(re: RegExp, s: string, visit: (m: RegExpExecArray) => void): void {
  re.lastIndex = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    if (m[0].length === 0) {
      const at = re.lastIndex;
      const c = s.charCodeAt(at);
      re.lastIndex = at + (re.unicode && c >= 0xd800 && c <= 0xdbff ? 2 : 1);
      if (re.lastIndex > s.length) break;
      continue;
    }
    visit(m);
  }
}

/**
 * Matches of a global regex on windows of a text around positions (in order): from `back`
 * characters before a position to `fwd` after, overlapping windows merged. For matches that are
 * bounded in length and each hold such a position, this finds what one pass over the whole
 * text finds, at the cost of finding the positions (a pattern led by alternatives or a class
 * would cost a full slow pass).
 */
export function matchesInWindows(
  s: string,
  hits: readonly number[],
  back: number,
  fwd: number,
  re: RegExp,
  visit: (start: number, end: number) => void,
): void {
  let from = -1;
  let to = -1;
  for (let i = 0; i <= hits.length; i++) {
    const h = hits[i];
    const a = h === undefined ? s.length + 1 : Math.max(0, h - back);
    if (a <= to) {
      to = Math.max(to, Math.min(s.length, (h as number) + fwd));
      continue;
    }
    if (to >= 0) matchesIn(s.slice(from, to), from, re, visit);
    if (h === undefined) break;
    from = a;
    to = Math.min(s.length, h + fwd);
  }
}

/** Each non-empty match of a global regex in a window that starts at `offset` of the text. */
function matchesIn(w: string, offset: number, re: RegExp, visit: (start: number, end: number) => void): void {
  re.lastIndex = 0;
  for (let m = re.exec(w); m !== null; m = re.exec(w)) {
    if (m[0].length > 0) visit(offset + m.index, offset + m.index + m[0].length);
    else re.lastIndex++;
  }
}
