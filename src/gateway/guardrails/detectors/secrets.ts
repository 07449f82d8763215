import { eachIndex, isAsciiLetter, isDigit, type Detector, type Spans } from "./scan-text.js";

/**
 * One secret shape: where its match starts relative to an occurrence of its anchor, a quick test
 * of the characters there, and the sticky pattern of the whole token.
 */
interface Shape {
  back: number;
  at: (s: string, i: number) => boolean;
  re: RegExp;
  /** An extra test of the matched token. */
  ok?: (token: string) => boolean;
}

const hasDigitAndLetter = (v: string): boolean => /\d/.test(v) && /[A-Za-z]/.test(v);
const prefixAt = (p: string, back: number) => (s: string, i: number) => s.startsWith(p, i - back);

/** Shapes found from each `-`, by the character before it (the PEM header's: after it). */
const OPENAI: Shape = {
  back: 2,
  at: prefixAt("sk", 2),
  re: /sk-[A-Za-z0-9_-]{20,}/y,
  ok: (v) => hasDigitAndLetter(v.slice(3)),
};
const SLACK: Shape = {
  back: 4,
  at: prefixAt("xox", 4),
  re: /xox[abprs]-[A-Za-z0-9-]{10,}/y,
  ok: (v) => /\d/.test(v),
};
const GITLAB: Shape = { back: 5, at: prefixAt("glpat", 5), re: /glpat-[A-Za-z0-9_-]{20,}/y };
/** A PEM private key's header; the block runs to its end line when that follows (pemEnd). */
const PEM: Shape = {
  back: 0,
  at: prefixAt("-----BEGIN ", 0),
  re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/y,
};
const PEM_END = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/y;
/** How far after its header a PEM block's end line may be (a 16384-bit RSA key is about 13 KB). */
const PEM_REACH = 20_000;
function dashShapes(s: string, i: number): Shape | null {
  const before = s.charCodeAt(i - 1);
  if (before === 107) return OPENAI; // sk-
  if (before === 116) return GITLAB; // glpat-
  if (s.charCodeAt(i + 1) === 45) return PEM; // -----BEGIN
  return before === 97 || before === 98 || before === 112 || before === 114 || before === 115 ? SLACK : null;
}

/** Shapes found from each `_`, by the characters before it. */
const GITHUB: Shape = {
  back: 3,
  at: (s, i) => /^gh[pousr]$/.test(s.slice(i - 3, i)),
  re: /gh[pousr]_[A-Za-z0-9]{36,}/y,
};
const GITHUB_PAT: Shape = { back: 6, at: prefixAt("github", 6), re: /github_pat_[A-Za-z0-9_]{22,}/y };
const STRIPE: Shape = {
  back: 2,
  at: (s, i) => /^[sr]k$/.test(s.slice(i - 2, i)),
  re: /[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/y,
};
function underscoreShapes(s: string, i: number): Shape | null {
  const before = s.charCodeAt(i - 1);
  if (before === 107) return STRIPE; // sk_, rk_
  if (before === 98) return GITHUB_PAT; // github_
  return s.charCodeAt(i - 3) === 103 ? GITHUB : null; // gh?_
}

/** Shapes found from their own literal prefix. */
const LITERAL: { anchor: string; shape: Shape }[] = [
  // AWS access key ids (long-term AKIA, temporary ASIA): exactly 20 characters.
  { anchor: "AKIA", shape: { back: 0, at: () => true, re: /AKIA[A-Z0-9]{16}(?![A-Za-z0-9])/y } },
  { anchor: "ASIA", shape: { back: 0, at: () => true, re: /ASIA[A-Z0-9]{16}(?![A-Za-z0-9])/y } },
  // Google API keys.
  { anchor: "AIza", shape: { back: 0, at: () => true, re: /AIza[A-Za-z0-9_-]{35}/y } },
  // JSON Web Tokens: base64url `{"` header and payload, and a signature.
  {
    anchor: "J",
    shape: {
      back: 2,
      at: prefixAt("ey", 2),
      re: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}/y,
    },
  },
];

/** Whether a token may start at `i`: not inside a word or a longer token. */
function startsToken(s: string, i: number): boolean {
  const c = s.charCodeAt(i - 1);
  return !(isDigit(c) || isAsciiLetter(c) || c === 95 || c === 45);
}

/**
 * The end lines of PEM blocks in one text, found by one forward search each: asking for the
 * next one after a header costs nothing when an earlier answer still holds, so a text of many
 * headers without end lines is searched once, not once per header.
 */
class PemEnds {
  private at = -1;
  private searchedFrom = Number.POSITIVE_INFINITY;
  constructor(private readonly s: string) {}

  /** The end of the PEM block whose header ends at `from`: its end line's end, or `from`. */
  blockEnd(from: number): number {
    if (from < this.searchedFrom || (this.at !== -1 && this.at < from)) {
      this.at = this.s.indexOf("-----END ", from);
      this.searchedFrom = from;
    }
    if (this.at === -1 || this.at - from > PEM_REACH) return from;
    PEM_END.lastIndex = this.at;
    const m = PEM_END.exec(this.s);
    return m === null ? from : this.at + m[0].length;
  }
}

function tryShape(s: string, i: number, shape: Shape, out: Spans, pem: PemEnds): number {
  const start = i - shape.back;
  if (start < 0 || !shape.at(s, i) || !startsToken(s, start)) return -1;
  shape.re.lastIndex = start;
  const m = shape.re.exec(s);
  if (m === null || (shape.ok && !shape.ok(m[0]))) return -1;
  const end = shape === PEM ? pem.blockEnd(start + m[0].length) : start + m[0].length;
  out.push(start, end);
  return end;
}

/**
 * Credentials in well-known shapes: OpenAI and Anthropic keys (`sk-…` with a digit and a letter
 * after 20 or more characters), AWS access key ids (`AKIA…`, `ASIA…`), GitHub tokens (`ghp_…`,
 * `github_pat_…`), Slack tokens (`xoxb-…`), Stripe keys (`sk_live_…`), GitLab tokens
 * (`glpat-…`), Google API keys (`AIza…`), JSON Web Tokens (`eyJ….eyJ….…`) and PEM private keys.
 * Each must start a token (`task-…` holds no `sk-` key). Generic high-entropy strings and
 * `password=…` assignments are not detected: too many hashes and ids look the same.
 */
export const secrets: Detector = {
  find(t, out) {
    const s = t.text;
    const pem = new PemEnds(s);
    const scan = (anchor: string, shapeAt: (s: string, i: number) => Shape | null): void => {
      let skipTo = 0;
      eachIndex(s, anchor, (i) => {
        const shape = i < skipTo ? null : shapeAt(s, i);
        const end = shape === null ? -1 : tryShape(s, i, shape, out, pem);
        if (end >= 0) skipTo = end;
      });
    };
    scan("-", dashShapes);
    scan("_", underscoreShapes);
    for (const { anchor, shape } of LITERAL) scan(anchor, () => shape);
  },
};
