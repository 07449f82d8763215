import { RE2JS } from "re2js";
import type { FilterField, FilterRule, FilterRulesConfig } from "../domain/destinations/filter-rules.js";

/** The values filter rules read (docs/wire-compatibility.md "Destinations record"); null = absent. */
export type FilterSubject = Record<FilterField, string | number | null>;

const NUMERIC_FIELDS = new Set<FilterField>([
  "total_cost",
  "total_tokens",
  "prompt_tokens",
  "completion_tokens",
]);

/**
 * A rule's pattern, compiled by RE2 (re2js): matching takes time linear in the text, so no
 * pattern can stall the process on a long prompt or completion, as a backtracking engine does
 * (`(a+)+$` on forty `a`s and a `b` takes JavaScript's RegExp days). RE2 has no lookaround or
 * backreferences; such a pattern is refused when the rule is saved (filter-rules.ts).
 */
const regexCache = new Map<string, RE2JS | null>();
function regexOf(source: string): RE2JS | null {
  let re = regexCache.get(source);
  if (re === undefined) {
    try {
      re = RE2JS.compile(source);
    } catch {
      re = null;
    }
    if (regexCache.size > 1_000) regexCache.clear();
    regexCache.set(source, re);
  }
  return re;
}

const asNumber = (v: string | number): number | null => {
  if (typeof v === "number") return v;
  if (v.trim() === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
};

/**
 * One rule (docs/broadcast.md "Selection"):
 * - exists / not_exists: the field has a value (a non-empty string, or any number);
 * - an absent field fails every other operator except not_equals and not_contains, which pass;
 * - equals / not_equals: numeric fields compare as numbers, text fields as exact strings;
 * - contains, not_contains, starts_with, ends_with: case-sensitive on the text (a number's
 *   decimal text);
 * - regex: an RE2 search on the text (linear time); a pattern that does not compile matches nothing;
 * - gt, lt, gte, lte: numbers; a text field holding no number fails.
 */
export function ruleMatches(rule: FilterRule, subject: FilterSubject): boolean {
  const raw = subject[rule.field];
  const present = raw !== null && raw !== "";
  switch (rule.operator) {
    case "exists":
      return present;
    case "not_exists":
      return !present;
    default:
      break;
  }
  const value = rule.value;
  if (!present || value === undefined) {
    return rule.operator === "not_equals" || rule.operator === "not_contains";
  }
  const text = String(raw);
  switch (rule.operator) {
    case "equals":
    case "not_equals": {
      let eq: boolean;
      if (NUMERIC_FIELDS.has(rule.field)) {
        const a = asNumber(raw);
        const b = asNumber(value);
        eq = a !== null && b !== null && a === b;
      } else eq = text === String(value);
      return rule.operator === "equals" ? eq : !eq;
    }
    case "contains":
      return text.includes(String(value));
    case "not_contains":
      return !text.includes(String(value));
    case "starts_with":
      return text.startsWith(String(value));
    case "ends_with":
      return text.endsWith(String(value));
    case "regex":
      return regexOf(String(value))?.test(text) ?? false;
    case "gt":
    case "lt":
    case "gte":
    case "lte": {
      const a = asNumber(raw);
      const b = asNumber(value);
      if (a === null || b === null) return false;
      if (rule.operator === "gt") return a > b;
      if (rule.operator === "lt") return a < b;
      if (rule.operator === "gte") return a >= b;
      return a <= b;
    }
  }
}

/**
 * Filter rules: none, or `enabled: false`, or no groups → everything matches. Otherwise every
 * group must match (groups are joined by AND), and a group matches when all (`and`) or any (`or`)
 * of its rules do; a group without rules matches.
 */
export function filterMatches(rules: FilterRulesConfig | null, subject: FilterSubject): boolean {
  if (rules === null || !rules.enabled) return true;
  for (const g of rules.groups) {
    if (g.rules.length === 0) continue;
    const ok =
      g.logic === "or"
        ? g.rules.some((r) => ruleMatches(r, subject))
        : g.rules.every((r) => ruleMatches(r, subject));
    if (!ok) return false;
  }
  return true;
}
