import { luhnValid } from "../luhn.js";
import { eachMatch, isDigit, isHexDigit, isWordCode, type Detector, type Spans } from "./scan-text.js";

/** Whether the characters around `[start, end)` end a number: no letter, digit or `_` next to it. */
function standsAlone(s: string, start: number, end: number, joiners: string): boolean {
  const before = s.charCodeAt(start - 1);
  const after = s.charCodeAt(end);
  if (isWordCode(before) || isWordCode(after)) return false;
  // `1.2.3.4.5`, `123-45-6789-0`: a joiner followed by a digit continues the number.
  if (joiners.includes(s.charAt(start - 1)) && isDigit(s.charCodeAt(start - 2))) return false;
  return !(joiners.includes(s.charAt(end)) && isDigit(s.charCodeAt(end + 1)));
}

/** Numbers the Social Security Administration never issues or has voided (advertising samples). */
const VOID_SSNS = new Set(["078-05-1120", "219-09-9999"]);

const SSN = /\d{3}-\d{2}-\d{4}/g;

/**
 * US Social Security numbers written `NNN-NN-NNNN`, excluding what is never issued: area 000,
 * 666 or 900-999, group 00, serial 0000, and the voided advertising samples.
 */
export const ssn: Detector = {
  find(t, out) {
    const s = t.text;
    eachMatch(SSN, s, (m) => {
      const v = m[0];
      const area = Number(v.slice(0, 3));
      if (area === 0 || area === 666 || area >= 900 || v.slice(4, 6) === "00" || v.slice(7) === "0000")
        return;
      if (VOID_SSNS.has(v) || !standsAlone(s, m.index, m.index + 11, "-")) return;
      out.push(m.index, m.index + 11);
    });
  },
};

/**
 * Issuer prefixes and lengths of the card networks (Visa, Mastercard, American Express,
 * Discover, JCB, Diners Club, UnionPay, Maestro): a Luhn-valid number outside them is far more
 * often an order or account number than a card.
 */
function cardNetwork(d: string): boolean {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p4 = Number(d.slice(0, 4));
  if (d[0] === "4") return n === 13 || n === 16 || n === 19;
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16;
  if (p2 === 34 || p2 === 37) return n === 15;
  if (p4 === 6011 || p2 === 65 || (p4 >= 6440 && p4 <= 6499)) return n >= 16 && n <= 19;
  if (p4 >= 3528 && p4 <= 3589) return n >= 16 && n <= 19;
  if ((p4 >= 3000 && p4 <= 3059) || p2 === 36 || p2 === 38 || p2 === 39) return n >= 14 && n <= 19;
  if (p2 === 62) return n >= 16 && n <= 19;
  if (p2 === 50 || (p2 >= 56 && p2 <= 69)) return n >= 12 && n <= 19;
  return false;
}

/** Where a run of digit groups long enough for a card starts. */
const CARD = /[2-6]\d{3}(?:[ -]?\d){9,15}/g;
/** The whole run of digit groups (separated by single spaces or dashes) from there. */
const RUN = /\d+(?:[ -]\d+)*/y;

/**
 * The cards in a run of digit groups `s[from, to)`: from each group, the longest span of whole
 * groups holding 13 to 19 digits that is a card; after a card, the search goes on after it.
 * Each run is read once, so a long run of groups (`4111 4111 4111 …`) costs time in proportion.
 */
function cardsInRun(s: string, from: number, to: number, out: Spans): void {
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = from; i < to;) {
    let j = i;
    while (j < to && isDigit(s.charCodeAt(j))) j++;
    starts.push(i);
    ends.push(j);
    i = j + 1;
  }
  const digits = s.slice(from, to).replace(/[ -]/g, "");
  const offset: number[] = [0];
  for (let g = 0; g < starts.length; g++) offset.push(offset[g]! + ends[g]! - starts[g]!);
  for (let g = 0; g < starts.length;) {
    let found = -1;
    for (let h = g; h < starts.length && offset[h + 1]! - offset[g]! <= 19; h++) {
      if (offset[h + 1]! - offset[g]! < 13 || !standsAlone(s, starts[g]!, ends[h]!, "-")) continue;
      const d = digits.slice(offset[g], offset[h + 1]);
      if (cardNetwork(d) && luhnValid(d)) found = h;
    }
    if (found < 0) g++;
    else {
      out.push(starts[g]!, ends[found]!);
      g = found + 1;
    }
  }
}

/**
 * Payment card numbers: 13 to 19 digits, optionally grouped by single spaces or dashes, with a
 * card network's prefix and length, passing the Luhn check. Numbers in a row (`4111 1111 1111
 * 1111 378282246310005`) are told apart at their groups (cardsInRun).
 */
export const creditCard: Detector = {
  find(t, out) {
    const s = t.text;
    CARD.lastIndex = 0;
    for (let m = CARD.exec(s); m !== null; m = CARD.exec(s)) {
      RUN.lastIndex = m.index;
      const run = RUN.exec(s) as RegExpExecArray;
      cardsInRun(s, m.index, m.index + run[0].length, out);
      CARD.lastIndex = m.index + run[0].length;
    }
  },
};

const IPV4 = /\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/g;

/** Whether `s[from, to)` is an IPv4 dotted quad: four numbers 0-255, none with a leading zero. */
export function ipv4At(s: string, from: number, to: number): boolean {
  let parts = 0;
  let partStart = from;
  for (let i = from; i <= to; i++) {
    if (i < to && s.charCodeAt(i) !== 46) {
      if (!isDigit(s.charCodeAt(i))) return false;
      continue;
    }
    const len = i - partStart;
    if (len === 0 || len > 3 || (len > 1 && s.charCodeAt(partStart) === 48)) return false;
    if (Number(s.slice(partStart, i)) > 255) return false;
    parts++;
    partStart = i + 1;
  }
  return parts === 4;
}

/** The number of hex groups in `s[from, to)` (`a:b:c`), or -1 when one is not 1-4 hex digits. */
function hexGroups(s: string, from: number, to: number): number {
  if (from === to) return 0;
  let groups = 0;
  let groupStart = from;
  for (let i = from; i <= to; i++) {
    if (i < to && s.charCodeAt(i) !== 58) {
      if (!isHexDigit(s.charCodeAt(i))) return -1;
      continue;
    }
    const len = i - groupStart;
    if (len === 0 || len > 4) return -1;
    groups++;
    groupStart = i + 1;
  }
  return groups;
}

/**
 * Whether `v` is an IPv6 address (RFC 4291's text forms, an IPv4 tail allowed) with at least one
 * decimal digit.
 */
export function ipv6Valid(v: string): boolean {
  if (!/\d/.test(v)) return false;
  let end = v.length;
  let extra = 0;
  const lastColon = v.lastIndexOf(":");
  if (lastColon < 0) return false;
  if (v.includes(".", lastColon)) {
    if (!ipv4At(v, lastColon + 1, v.length)) return false;
    end = v.charCodeAt(lastColon - 1) === 58 ? lastColon + 1 : lastColon;
    extra = 2;
  }
  const gap = v.indexOf("::");
  if (gap === -1 || gap >= end - 1) return hexGroups(v, 0, end) + extra === 8;
  const again = v.indexOf("::", gap + 1);
  if (again !== -1 && again < end - 1) return false;
  const left = hexGroups(v, 0, gap);
  const right = hexGroups(v, gap + 2, end);
  return left >= 0 && right >= 0 && left + right + extra > 0 && left + right + extra <= 7;
}

/** A quick test before parsing: an IPv6 address has "::" or seven colons (`10:30` has neither). */
function mayBeIpv6(s: string, from: number, to: number): boolean {
  let colons = 0;
  for (let i = from; i < to; i++) {
    if (s.charCodeAt(i) !== 58) continue;
    if (s.charCodeAt(i + 1) === 58) return true;
    colons++;
  }
  return colons >= 7;
}

const isV6 = (c: number): boolean => isHexDigit(c) || c === 58;

/**
 * IP addresses: IPv4 dotted quads (not part of a longer dotted number such as a version
 * `1.2.3.4.5`) and IPv6 addresses in full or compressed form (`2001:db8::1`, `::ffff:192.0.2.1`);
 * a compressed form needs a digit, so `dead::beef` and `std::map`-like words are not addresses.
 * Times (`10:30:00`) and MAC addresses (six groups) are not.
 */
export const ipAddress: Detector = {
  find(t, out) {
    const s = t.text;
    eachMatch(IPV4, s, (m) => {
      const end = m.index + m[0].length;
      if (ipv4At(s, m.index, end) && standsAlone(s, m.index, end, ".")) out.push(m.index, end);
    });
    for (let i = s.indexOf(":"); i !== -1;) {
      let a = i;
      while (a > 0 && isV6(s.charCodeAt(a - 1))) a--;
      let b = i + 1;
      while (b < s.length && (isV6(s.charCodeAt(b)) || s.charCodeAt(b) === 46)) b++;
      const next = b;
      while (b > i + 1 && s.charCodeAt(b - 1) === 46) b--;
      if (s.charCodeAt(b - 1) === 58 && s.charCodeAt(b - 2) !== 58) b--;
      const c = s.charCodeAt(a - 1);
      if (
        !isWordCode(c) &&
        c !== 46 &&
        !isWordCode(s.charCodeAt(b)) &&
        mayBeIpv6(s, a, b) &&
        ipv6Valid(s.slice(a, b))
      ) {
        out.push(a, b);
      }
      i = s.indexOf(":", next);
    }
  },
};
