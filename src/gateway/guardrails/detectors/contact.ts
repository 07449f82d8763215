import {
  eachAnchored,
  eachMatch,
  isAsciiLetter,
  isDigit,
  isWordCode,
  type Detector,
  type Spans,
} from "./scan-text.js";

/** A character of an address's local part (the common unquoted ones). */
const isLocal = (c: number): boolean =>
  isDigit(c) || isAsciiLetter(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
const isDomain = (c: number): boolean => isDigit(c) || isAsciiLetter(c) || c === 46 || c === 45;

/** Whether `s[from, to)` is a host name with a top-level domain of two or more letters. */
function validDomain(s: string, from: number, to: number): boolean {
  let labelStart = from;
  let labels = 0;
  for (let i = from; i <= to; i++) {
    if (i < to && s.charCodeAt(i) !== 46) continue;
    const len = i - labelStart;
    if (len === 0 || len > 63 || s.charCodeAt(labelStart) === 45 || s.charCodeAt(i - 1) === 45) return false;
    labels++;
    if (i < to) labelStart = i + 1;
  }
  if (labels < 2 || to - labelStart < 2) return false;
  for (let i = labelStart; i < to; i++) if (!isAsciiLetter(s.charCodeAt(i))) return false;
  return true;
}

/** Whether the local part `s[from, to)` has no leading, trailing or doubled dot. */
function validLocal(s: string, from: number, to: number): boolean {
  if (from >= to || s.charCodeAt(from) === 46 || s.charCodeAt(to - 1) === 46) return false;
  for (let i = from + 1; i < to; i++) if (s.charCodeAt(i) === 46 && s.charCodeAt(i - 1) === 46) return false;
  return true;
}

/**
 * Email addresses: `local@domain.tld` with an unquoted ASCII local part (letters, digits,
 * `. _ % + -`, at most 64 characters, no leading, trailing or doubled dot) and a host name whose
 * last label is letters. Found from each `@` outward (a text without `@` costs one search).
 */
export const email: Detector = {
  find(t, out) {
    const s = t.text;
    let floor = 0;
    for (let at = s.indexOf("@"); at !== -1;) {
      let a = at;
      while (a > floor && at - a < 65 && isLocal(s.charCodeAt(a - 1))) a--;
      let b = at + 1;
      while (b < s.length && b - at < 255 && isDomain(s.charCodeAt(b))) b++;
      while (b > at + 1 && (s.charCodeAt(b - 1) === 46 || s.charCodeAt(b - 1) === 45)) b--;
      const ok =
        !isLocal(s.charCodeAt(a - 1)) &&
        validLocal(s, a, at) &&
        !isWordCode(s.charCodeAt(b)) &&
        validDomain(s, at + 1, b);
      if (ok) {
        out.push(a, b);
        floor = b;
        at = s.indexOf("@", b);
      } else at = s.indexOf("@", at + 1);
    }
  },
};

/** International: `+`, a country code, digit groups (or one run of digits). */
const INTERNATIONAL = /\+[1-9](?:\d{0,2}(?:[ .-]\(?\d{1,4}\)?)?(?:[ .-]\d{2,5}){1,4}|\d{7,14})/y;
/** North American with the area code in parentheses, and without. */
const NANP_PARENS = /\([2-9]\d\d\) ?\d{3}[ .-]\d{4}/y;
const NANP = /[2-9]\d\d[ .-]\d{3}[ .-]\d{4}/g;
/** A North American number's optional leading `1` and separator, before the area code. */
const TRUNK = /(?:^|[^\w+.-])(1[ .-]?)$/;

/** Whether `s[start, end)` stands apart from the text around it. */
function phoneBounded(s: string, start: number, end: number): boolean {
  const before = s.charCodeAt(start - 1);
  if (isWordCode(before) || before === 43 || before === 45 || before === 46) return false;
  const after = s.charCodeAt(end);
  if (isDigit(after) || isAsciiLetter(after)) return false;
  return !((after === 45 || after === 46) && isDigit(s.charCodeAt(end + 1)));
}

function digitCount(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (isDigit(s.charCodeAt(i))) n++;
  return n;
}

/** A North American match, extended to its leading `1` when there is one. */
function nanp(s: string, start: number, end: number, out: Spans): void {
  const trunk = TRUNK.exec(s.slice(Math.max(0, start - 3), start));
  const from = trunk ? start - (trunk[1] as string).length : start;
  if (phoneBounded(s, from, end)) out.push(from, end);
}

/**
 * Phone numbers, in two shapes: international (`+` and a country code, then digit groups
 * separated by single spaces, dots or dashes, or none: 8 to 15 digits in all, E.164's limit) and
 * North American (`(212) 555-0100`, `212-555-0100`, `212.555.0100`, `212 555 0100`, optionally
 * led by `1`; the area code starts with 2-9). A plain run of digits without `+` is never a phone
 * number (order numbers, timestamps), nor are dates (`2024-01-15`) or groups of four.
 */
export const phone: Detector = {
  find(t, out) {
    const s = t.text;
    eachAnchored(s, "+", 0, INTERNATIONAL, (m) => {
      const end = m.index + m[0].length;
      const digits = digitCount(s, m.index, end);
      if (digits >= 8 && digits <= 15 && phoneBounded(s, m.index, end)) out.push(m.index, end);
    });
    eachAnchored(s, "(", 0, NANP_PARENS, (m) => nanp(s, m.index, m.index + m[0].length, out));
    eachMatch(NANP, s, (m) => nanp(s, m.index, m.index + m[0].length, out));
  },
};
