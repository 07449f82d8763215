import { RE2JS } from "re2js";
import { Type, type Static } from "typebox";
import { StringEnum } from "../../lib/typebox.js";
import { invalid } from "../errors.js";

/** FilterRulesConfig (docs/wire-compatibility.md "Destinations record"). The schema checks shapes, enums. */
export const FILTER_FIELDS = [
  "model",
  "provider",
  "session_id",
  "user_id",
  "api_key_name",
  "finish_reason",
  "input",
  "output",
  "total_cost",
  "total_tokens",
  "prompt_tokens",
  "completion_tokens",
] as const;

export const FILTER_OPERATORS = [
  "equals",
  "not_equals",
  "contains",
  "not_contains",
  "regex",
  "starts_with",
  "ends_with",
  "gt",
  "lt",
  "gte",
  "lte",
  "exists",
  "not_exists",
] as const;

export type FilterField = (typeof FILTER_FIELDS)[number];
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export const FilterLogicSchema = StringEnum(["and", "or"] as const);

/** One rule, as requests send it and records return it. */
export const FilterRuleSchema = Type.Object({
  field: StringEnum(FILTER_FIELDS),
  operator: StringEnum(FILTER_OPERATORS),
  value: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Number()])),
});
export type FilterRule = Static<typeof FilterRuleSchema>;

/** Stored and returned rules: `enabled` and every group's `logic` filled in. */
export const FilterRulesSchema = Type.Object({
  enabled: Type.Boolean(),
  groups: Type.Array(Type.Object({ logic: FilterLogicSchema, rules: Type.Array(FilterRuleSchema) })),
});
export type FilterRulesConfig = Static<typeof FilterRulesSchema>;

/** The input shape: `enabled` and `logic` may be omitted. */
export interface FilterRulesInput {
  enabled?: boolean;
  groups: { logic?: "and" | "or"; rules: FilterRule[] }[];
}

const PRESENCE = new Set<FilterOperator>(["exists", "not_exists"]);
const NUMERIC = new Set<FilterOperator>(["gt", "lt", "gte", "lte"]);
const TEXT = new Set<FilterOperator>(["contains", "not_contains", "starts_with", "ends_with", "regex"]);

/**
 * Fills the defaults (`enabled: true`, `logic: "and"`) and checks what the schema cannot:
 * `value` is required except for exists/not_exists (where it is dropped); gt/lt/gte/lte need a
 * number; contains/starts_with/ends_with/regex need a string; a regex must compile as RE2.
 */
export function normalizeFilterRules(input: FilterRulesInput): FilterRulesConfig {
  return {
    enabled: input.enabled ?? true,
    groups: input.groups.map((g, gi) => ({
      logic: g.logic ?? "and",
      rules: g.rules.map((r, ri) => normalizeRule(r, `filter_rules.groups[${gi}].rules[${ri}].value`)),
    })),
  };
}

function normalizeRule(r: FilterRule, path: string): FilterRule {
  if (PRESENCE.has(r.operator)) return { field: r.field, operator: r.operator };
  if (r.value === undefined) throw invalid(`${path}: is required for operator ${r.operator}`);
  if (NUMERIC.has(r.operator) && typeof r.value !== "number") {
    throw invalid(`${path}: must be number for operator ${r.operator}`);
  }
  if (TEXT.has(r.operator) && typeof r.value !== "string") {
    throw invalid(`${path}: must be string for operator ${r.operator}`);
  }
  if (r.operator === "regex") {
    // The syntax the filter runs (RE2, src/broadcast/filter-match.ts): linear-time matching, so
    // no lookaround or backreferences.
    try {
      RE2JS.compile(r.value as string);
    } catch (err) {
      const why = err instanceof Error ? `: ${err.message}` : "";
      throw invalid(
        `${path}: is not a valid regular expression (RE2 syntax, without lookaround or backreferences)${why}`,
      );
    }
  }
  return { field: r.field, operator: r.operator, value: r.value };
}
