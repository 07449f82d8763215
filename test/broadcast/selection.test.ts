import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toBroadcastGeneration, type Candidate } from "../../src/broadcast/broadcast-generation.js";
import { filterMatches, type FilterSubject } from "../../src/broadcast/filter-match.js";
import type { OutboxRow } from "../../src/broadcast/payload-rows.js";
import { sampledIn } from "../../src/broadcast/sampling.js";
import { selects, type DestinationRule } from "../../src/broadcast/selection.js";
import {
  FILTER_FIELDS,
  FILTER_OPERATORS,
  type FilterRule,
  type FilterRulesConfig,
} from "../../src/domain/destinations/filter-rules.js";

describe("sampling", () => {
  it("over 100,000 generations at rate 0.1 takes 0.1 ± 0.005, the same on every evaluation", () => {
    const dest = "3f0c1e9a-1111-4222-8333-444455556666";
    const ids = Array.from({ length: 100_000 }, (_, i) => `gen-${i}`);
    const first = ids.filter((id) => sampledIn(dest, 0.1, null, id));
    expect(Math.abs(first.length / ids.length - 0.1)).toBeLessThanOrEqual(0.005);
    const again = ids.filter((id) => sampledIn(dest, 0.1, null, id));
    expect(again).toEqual(first);
  });

  it("is per session (a whole session in or out) and per destination", () => {
    const sessions = Array.from({ length: 2_000 }, (_, i) => `s-${i}`);
    for (const s of sessions.slice(0, 50)) {
      const d = sampledIn("d1", 0.5, s, "gen-a");
      for (let g = 0; g < 5; g++) expect(sampledIn("d1", 0.5, s, `gen-${g}`)).toBe(d);
    }
    const a = sessions.map((s) => sampledIn("d1", 0.5, s, "x"));
    const b = sessions.map((s) => sampledIn("d2", 0.5, s, "x"));
    expect(a).not.toEqual(b);
    expect(sampledIn("d1", 1, "s", "g")).toBe(true);
  });
});

/** The reference: every rule written out directly from docs/broadcast.md "Selection" and docs/wire-compatibility.md "Destinations record". */
function reference(rules: FilterRulesConfig | null, s: FilterSubject): boolean {
  if (!rules || !rules.enabled) return true;
  const numeric = ["total_cost", "total_tokens", "prompt_tokens", "completion_tokens"];
  const one = (r: FilterRule): boolean => {
    const v = s[r.field];
    const has = v !== null && v !== "";
    if (r.operator === "exists") return has;
    if (r.operator === "not_exists") return !has;
    if (!has || r.value === undefined) return r.operator === "not_equals" || r.operator === "not_contains";
    const t = String(v);
    const w = String(r.value);
    const num = (x: string | number) =>
      typeof x === "number" ? x : x.trim() === "" || !Number.isFinite(Number(x)) ? NaN : Number(x);
    const eq = numeric.includes(r.field) ? num(v) === num(r.value) : t === w;
    const cmp = (f: (a: number, b: number) => boolean) => {
      const a = num(v);
      const b = num(r.value as string | number);
      return !Number.isNaN(a) && !Number.isNaN(b) && f(a, b);
    };
    switch (r.operator) {
      case "equals":
        return eq;
      case "not_equals":
        return !eq;
      case "contains":
        return t.includes(w);
      case "not_contains":
        return !t.includes(w);
      case "starts_with":
        return t.startsWith(w);
      case "ends_with":
        return t.endsWith(w);
      case "regex":
        return new RegExp(w).test(t);
      case "gt":
        return cmp((a, b) => a > b);
      case "lt":
        return cmp((a, b) => a < b);
      case "gte":
        return cmp((a, b) => a >= b);
      case "lte":
        return cmp((a, b) => a <= b);
    }
  };
  return rules.groups.every(
    (g) => g.rules.length === 0 || (g.logic === "or" ? g.rules.some(one) : g.rules.every(one)),
  );
}

const word = fc.constantFrom(
  "openai/gpt-4o",
  "anthropic/claude",
  "OpenAI",
  "stop",
  "length",
  "sess-1",
  "",
  "gpt",
  "1000",
  "0.5",
);
const num = fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.constantFrom(0, 0.001, 0.5, 1000));
const subject: fc.Arbitrary<FilterSubject> = fc.record({
  model: fc.option(word, { nil: null }),
  provider: fc.option(word, { nil: null }),
  session_id: fc.option(word, { nil: null }),
  user_id: fc.option(word, { nil: null }),
  api_key_name: fc.option(word, { nil: null }),
  finish_reason: fc.option(word, { nil: null }),
  input: fc.option(word, { nil: null }),
  output: fc.option(word, { nil: null }),
  total_cost: fc.option(num, { nil: null }),
  total_tokens: fc.option(num, { nil: null }),
  prompt_tokens: fc.option(num, { nil: null }),
  completion_tokens: fc.option(num, { nil: null }),
});
const rule: fc.Arbitrary<FilterRule> = fc.record({
  field: fc.constantFrom(...FILTER_FIELDS),
  operator: fc.constantFrom(...FILTER_OPERATORS),
  value: fc.oneof(word, num, fc.constantFrom("^openai/", "gpt|claude", "[0-9]+")),
});
const rules: fc.Arbitrary<FilterRulesConfig | null> = fc.option(
  fc.record({
    enabled: fc.boolean(),
    groups: fc.array(
      fc.record({
        logic: fc.constantFrom("and" as const, "or" as const),
        rules: fc.array(rule, { maxLength: 4 }),
      }),
      { maxLength: 3 },
    ),
  }),
  { nil: null },
);

describe("filter rules", () => {
  it("agree with the reference evaluator on every field, operator and group shape", () => {
    fc.assert(
      fc.property(rules, subject, (r, s) => filterMatches(r, s) === reference(r, s)),
      { numRuns: 5_000 },
    );
  });

  it("a regex that backtracks catastrophically in JavaScript ends at once on a long completion", () => {
    // JavaScript's RegExp needs about 2^40 steps here (days); RE2's time is linear in the text.
    const regex = (value: string, output: string) =>
      filterMatches(
        { enabled: true, groups: [{ logic: "and", rules: [{ field: "output", operator: "regex", value }] }] },
        { ...blank, output },
      );
    const blank = Object.fromEntries(FILTER_FIELDS.map((f) => [f, null])) as FilterSubject;
    expect(regex("(a+)+$", `${"a".repeat(40)}b`)).toBe(false);
    expect(regex("(a|aa)*c", "a".repeat(200_000))).toBe(false);
    expect(regex("(a+)+$", "a".repeat(40))).toBe(true);
    // Ordinary patterns, inline flags included, match as before.
    expect(regex("(?i)^HELLO", "hello there")).toBe(true);
    expect(regex("[0-9]+ tokens", "used 42 tokens")).toBe(true);
    expect(regex("^x", "y")).toBe(false);
  });
});

const row = (over: Partial<OutboxRow> = {}): OutboxRow => ({
  id: "gen-1",
  created_at_ms: Date.UTC(2026, 10, 24),
  api_key_hash: "a".repeat(64),
  workspace_id: "ws",
  model: "openai/gpt-4o",
  provider: "OpenAI",
  app_id: null,
  user_id: "u1",
  external_user: "ext",
  finish_reason: "stop",
  tokens_prompt: 10,
  tokens_completion: 5,
  tokens_reasoning: 0,
  tokens_cached: 0,
  is_byok: false,
  streamed: false,
  cancelled: false,
  usage_nano: 1_500_000_000n,
  byok_usage_inference_nano: 0n,
  latency_ms: 100,
  generation_time_ms: 400,
  api: "chat",
  ...over,
});

const rule0 = (over: Partial<DestinationRule> = {}): DestinationRule => ({
  id: "d",
  organizationId: "o",
  workspaceId: "ws",
  type: "webhook",
  enabled: true,
  samplingRate: 1,
  apiKeyHashes: null,
  filterRules: null,
  flags: { privacyMode: false, cost: false, identity: false, requestContext: false },
  ...over,
});

describe("selection and the BroadcastGeneration allowlist", () => {
  const c: Candidate = {
    row: row(),
    apiKeyName: "prod",
    context: {
      input: [{ role: "user", content: "hello" }],
      output: "hi",
      params: { temperature: 0.2 },
      trace: { trace_id: "t" },
      attempts: [],
      appTitle: "App",
      referer: "https://app",
      sessionId: "s1",
      promptCostUsd: 0.5,
      completionCostUsd: 1,
    },
  };

  it("takes a generation only when enabled, in the workspace and on the key allowlist", () => {
    expect(selects(rule0(), c, "ws")).toBe(true);
    expect(selects(rule0({ enabled: false }), c, "ws")).toBe(false);
    expect(selects(rule0(), c, "other")).toBe(false);
    expect(selects(rule0({ apiKeyHashes: new Set(["b".repeat(64)]) }), c, "ws")).toBe(false);
    expect(selects(rule0({ apiKeyHashes: new Set(["a".repeat(64)]) }), c, "ws")).toBe(true);
  });

  it("flags add exactly their groups; privacy mode drops content; no key hash beyond a prefix", () => {
    const base = toBroadcastGeneration(c, rule0().flags);
    expect(base.cost).toBeNull();
    expect(base.identity).toBeNull();
    expect(base.requestContext).toBeNull();
    expect(base.content).toEqual({ input: [{ role: "user", content: "hello" }], output: "hi" });
    const all = toBroadcastGeneration(c, {
      privacyMode: true,
      cost: true,
      identity: true,
      requestContext: true,
    });
    expect(all.content).toBeNull();
    expect(all.cost).toEqual({ totalUsd: 1.5, promptUsd: 0.5, completionUsd: 1, byokUsd: 0 });
    expect(all.identity).toEqual({
      apiKeyName: "prod",
      apiKeyHashPrefix: "a".repeat(12),
      userId: "u1",
      externalUser: "ext",
    });
    expect(all.requestContext).toEqual({ appTitle: "App", referer: "https://app", sessionId: "s1" });
    expect(JSON.stringify(all)).not.toContain("a".repeat(13));
  });
});
