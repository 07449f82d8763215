import {
  eachAnchored,
  isAsciiLetter,
  isDigit,
  matchesInWindows,
  type Detector,
  type Spans,
} from "./scan-text.js";

/** A capitalised name: `Smith`, `O'Brien`, `McDonald`, `Smith-Jones`. */
const WORD = String.raw`[A-Z](?:'[A-Z])?[a-z]+(?:[A-Z][a-z]+)?(?:-[A-Z][a-z]+)?`;
/** One to three names, a middle initial allowed: `Jane`, `Jane Smith`, `John F. Kennedy`. */
const NAME = String.raw`(${WORD}(?: (?:[A-Z]\. )?${WORD}){0,2})`;

/** Honorifics by their first letter (a search for one capital letter is quick), as sticky patterns. */
const HONORIFICS = [
  { anchor: "M", re: new RegExp(String.raw`M(?:rs?|s|x|iss|adam|me|lle)\.? +${NAME}`, "y") },
  { anchor: "D", re: new RegExp(String.raw`D(?:r|ame)\.? +${NAME}`, "y") },
  { anchor: "P", re: new RegExp(String.raw`Prof(?:essor)?\.? +${NAME}`, "y") },
  { anchor: "S", re: new RegExp(String.raw`Sir +${NAME}`, "y") },
];
/** "My name is Jane", "my full name's Jane Smith" (from each `y name` and `y full`). */
const MY_NAME = new RegExp(String.raw`[Mm]y (?:full )?name(?: is|'s|’s) +${NAME}`, "y");
/** `Name: Jane Smith` (also `Full name:`, `Patient name:`), from each `:`. */
const LABELLED = new RegExp(String.raw`[Nn]ame: *${NAME}`, "y");

/** Whether `s[i]` starts a word (the character before is not a letter or digit). */
const wordStart = (s: string, i: number): boolean =>
  !isAsciiLetter(s.charCodeAt(i - 1)) && !isDigit(s.charCodeAt(i - 1));

/** The name's span of a match whose last group is the name, unless a letter follows it. */
function pushName(s: string, m: RegExpExecArray, out: Spans): void {
  const name = m[1] as string;
  const end = m.index + m[0].length;
  if (wordStart(s, m.index) && !isAsciiLetter(s.charCodeAt(end))) out.push(end - name.length, end);
}

/**
 * Person names, by a conservative heuristic: the capitalised words after an honorific (Mr, Mrs,
 * Ms, Mx, Miss, Madam, Mme, Mlle, Dr, Prof, Professor, Sir, Dame), after "my name is", or after a
 * `Name:` label. Only the name is a match (`Dr. [PERSON_NAME]`). It misses names with no such
 * cue, names in lower or upper case, and names in scripts other than Latin; it takes brands
 * like "Dr. Pepper" for names (docs/guardrails-filters.md "person-name").
 */
export const personName: Detector = {
  find(t, out) {
    const s = t.text;
    const push = (m: RegExpExecArray): void => pushName(s, m, out);
    for (const h of HONORIFICS) eachAnchored(s, h.anchor, 0, h.re, push);
    eachAnchored(s, "y name", 1, MY_NAME, push);
    eachAnchored(s, "y full", 1, MY_NAME, push);
    eachAnchored(s, ":", 4, LABELLED, push);
  },
};

const SUFFIXES = [
  "Street",
  "St",
  "Avenue",
  "Ave",
  "Road",
  "Rd",
  "Boulevard",
  "Blvd",
  "Lane",
  "Ln",
  "Drive",
  "Dr",
  "Court",
  "Ct",
  "Place",
  "Pl",
  "Square",
  "Sq",
  "Terrace",
  "Parkway",
  "Pkwy",
  "Circle",
  "Cir",
  "Highway",
  "Hwy",
  "Way",
  "Trail",
  "Crescent",
  "Close",
];
const SUFFIX_WORDS = [...SUFFIXES, ...SUFFIXES.map((x) => x.toUpperCase())].sort(
  (a, b) => b.length - a.length,
);
const SUFFIX_SET = new Set(SUFFIX_WORDS);
const SUFFIX_LETTERS = [...new Set(SUFFIX_WORDS.map((w) => w[0] as string))];

const STREET_WORD = String.raw`(?:[A-Z][a-z]+|[A-Z]+|\d{1,3}(?:st|nd|rd|th))\.?`;
const ADDRESS = new RegExp(
  String.raw`\d{1,6}[A-Za-z]? (?:${STREET_WORD} ){1,4}(?:${SUFFIX_WORDS.join("|")})\b\.?` +
    String.raw`(?:,? (?:Apt|Apartment|Suite|Ste|Unit|Floor|Fl|#)\.? ?#?[A-Za-z0-9-]+)?`,
  "g",
);

/** Where a street suffix word starts in `s` (a search for each capital letter, then the word). */
function suffixesIn(s: string): number[] {
  const hits: number[] = [];
  for (const letter of SUFFIX_LETTERS) {
    for (let i = s.indexOf(letter); i !== -1; i = s.indexOf(letter, i + 1)) {
      if (s.charCodeAt(i - 1) !== 32) continue;
      let end = i + 1;
      while (end - i < 10 && isAsciiLetter(s.charCodeAt(end))) end++;
      if (SUFFIX_SET.has(s.slice(i, end))) hits.push(i);
    }
  }
  return hits.sort((a, b) => a - b);
}

/**
 * Street addresses written number first: a house number (`221B` too), one to four capitalised or
 * ordinal words, a street suffix (Street, St, Avenue, Ave, Road, Rd, Boulevard, Lane, Drive,
 * Court, Place, Square, Terrace, Parkway, Circle, Highway, Way, Trail, Crescent, Close, or
 * their abbreviations, also in capitals) and an optional unit (`Apt 4B`, `Suite 200`). Town,
 * postcode and country are not part of the match; addresses written street first
 * (`Hauptstraße 5`), post boxes and lower-case addresses are not detected. The pattern runs
 * only around street suffixes.
 */
export const address: Detector = {
  find(t, out) {
    const s = t.text;
    const hits = suffixesIn(s);
    if (hits.length === 0) return;
    matchesInWindows(s, hits, 100, 40, ADDRESS, (start, end) => {
      if (wordStart(s, start) && s.charCodeAt(start - 1) !== 46) out.push(start, end);
    });
  },
};
