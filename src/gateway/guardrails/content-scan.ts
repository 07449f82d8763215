import type { GuardrailAction } from "../../domain/guardrails/guardrail-policy.js";
import { BUILTIN_DETECTORS, ScanText, type Detector, type Spans } from "./builtin-detectors.js";
import type { EffectiveGuardrails } from "./combine.js";
import type { EffectiveFilter } from "./combine-filters.js";
import { actionStrength } from "./combine-filters.js";
import { distinct, eachMatch } from "./detectors/scan-text.js";

/**
 * The content filter engine (docs/guardrails-filters.md): a combined policy's filters compiled
 * once into a scanner, which finds every filter's matches in a text and applies its action.
 * Every filter reads the original text (never another's redaction), so the order of filters
 * changes nothing.
 */

/** Whose text is scanned: the user's own words, or anything else (system, assistant, tool results). */
export type TextRole = "user" | "other";

/** A blocking filter that matched. */
export interface BlockedBy {
  label: string;
  guardrailId: string;
  guardrailName: string;
  /** The built-in's slug, or the custom filter's pattern. */
  filter: string;
}

export interface TextScan {
  /** One entry per blocking filter that matched (the request is refused). */
  blocked: readonly BlockedBy[];
  /** A flagging filter's label per match. */
  flagged: readonly string[];
  /** A redacting filter's label per match. */
  redactedLabels: readonly string[];
  /** The text with every redacting match replaced by its label; null when none matched. */
  redacted: string | null;
}

export interface ContentScanner {
  /** No filter: scanning finds nothing. */
  readonly empty: boolean;
  /** Custom patterns that do not compile as JavaScript regexes (they never match). */
  readonly broken: readonly string[];
  scanText(text: string, role?: TextRole): TextScan;
}

interface Compiled {
  detector: Detector;
  label: string;
  action: GuardrailAction;
  blockedBy: BlockedBy;
}

const CLEAN: TextScan = Object.freeze({ blocked: [], flagged: [], redactedLabels: [], redacted: null });

/**
 * A custom filter's pattern as a global regex: with the `u` flag when the pattern is valid
 * Unicode-mode syntax (a match then never splits a surrogate pair), else without; case-sensitive,
 * `.` not matching line breaks (JavaScript's defaults). Null when neither compiles.
 */
export function compileCustomPattern(pattern: string): RegExp | null {
  for (const flags of ["gu", "g"]) {
    try {
      return new RegExp(pattern, flags);
    } catch {
      // Try the next flags.
    }
  }
  return null;
}

function customDetector(re: RegExp): Detector {
  return { find: (t, out) => eachMatch(re, t.text, (m) => out.push(m.index, m.index + m[0].length)) };
}

/** Replaces each redacted span with its label: overlapping spans merge, adjacent ones of one label too. */
function redact(text: string, spans: { start: number; end: number; label: string }[]): string {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const parts: string[] = [];
  let at = 0;
  let open: { start: number; end: number; label: string } | null = null;
  for (const s of spans) {
    if (open !== null && (s.start < open.end || (s.start === open.end && s.label === open.label))) {
      open.end = Math.max(open.end, s.end);
      continue;
    }
    if (open !== null) {
      parts.push(text.slice(at, open.start), open.label);
      at = open.end;
    }
    open = { ...s };
  }
  if (open !== null) parts.push(text.slice(at, open.start), open.label);
  parts.push(text.slice(open === null ? at : open.end));
  return parts.join("");
}

class Scanner implements ContentScanner {
  readonly empty: boolean;
  constructor(
    private readonly forUser: Compiled[],
    private readonly forOther: Compiled[],
    readonly broken: readonly string[],
  ) {
    this.empty = forUser.length === 0;
  }

  scanText(text: string, role: TextRole = "user"): TextScan {
    const filters = role === "user" ? this.forUser : this.forOther;
    if (filters.length === 0 || text.length === 0) return CLEAN;
    const t = new ScanText(text);
    const found: Spans = [];
    let blocked: BlockedBy[] | null = null;
    let flagged: string[] | null = null;
    let spans: { start: number; end: number; label: string }[] | null = null;
    for (const f of filters) {
      found.length = 0;
      f.detector.find(t, found);
      if (found.length === 0) continue;
      const hits = distinct(found);
      if (f.action === "flag") for (let i = 0; i < hits.length; i += 2) (flagged ??= []).push(f.label);
      else if (f.action === "redact") {
        spans ??= [];
        for (let i = 0; i < hits.length; i += 2)
          spans.push({ start: hits[i]!, end: hits[i + 1]!, label: f.label });
      } else (blocked ??= []).push(f.blockedBy);
    }
    if (blocked === null && flagged === null && spans === null) return CLEAN;
    return {
      blocked: blocked ?? [],
      flagged: flagged ?? [],
      redactedLabels: spans?.map((s) => s.label) ?? [],
      redacted: spans === null ? null : redact(text, spans),
    };
  }
}

/**
 * Per role, one entry per detector with its strongest action: prompt-injection's `user_only`
 * entry (combine-filters.ts) joins only the user's list. A built-in this engine does not know
 * (a newer slug) is skipped.
 */
function compile(filters: readonly EffectiveFilter[]): Scanner {
  const user = new Map<string, Compiled>();
  const other = new Map<string, Compiled>();
  const broken: string[] = [];
  const regexes = new Map<string, RegExp | null>();
  for (const f of filters) {
    let detector: Detector | undefined;
    if (f.builtin !== null) detector = BUILTIN_DETECTORS[f.builtin];
    else if (f.pattern !== null) {
      if (!regexes.has(f.pattern)) regexes.set(f.pattern, compileCustomPattern(f.pattern));
      const re = regexes.get(f.pattern) ?? null;
      if (re === null) broken.push(f.pattern);
      else detector = customDetector(re);
    }
    if (detector === undefined) continue;
    const key = f.builtin ?? `\u0000${f.pattern}`;
    const blockedBy = {
      label: f.label,
      guardrailId: f.by.guardrailId,
      guardrailName: f.by.guardrailName,
      filter: f.builtin ?? f.pattern ?? "",
    };
    const c: Compiled = { detector, label: f.label, action: f.action, blockedBy };
    for (const list of f.scope === "user_only" ? [user] : [user, other]) {
      const had = list.get(key);
      if (had === undefined || actionStrength(c.action) > actionStrength(had.action)) list.set(key, c);
    }
  }
  return new Scanner([...user.values()], [...other.values()], broken);
}

const EMPTY_SCANNER = new Scanner([], [], []);
const compiled = new WeakMap<EffectiveGuardrails, Scanner>();

/** The scanner of a combined policy's filters, compiled on first use and kept with the policy. */
export function scannerOf(e: EffectiveGuardrails): ContentScanner {
  if (e.filters.length === 0) return EMPTY_SCANNER;
  let s = compiled.get(e);
  if (s === undefined) compiled.set(e, (s = compile(e.filters)));
  return s;
}
