import { usdToNano } from "../../lib/money.js";
import { invalid } from "../errors.js";
import {
  ZDR_GROUPS,
  type BuiltinFilterRule,
  type BuiltinFilterSlug,
  type ContentFilterRule,
  type DataRegion,
  type GuardrailAction,
  type GuardrailResetInterval,
  type GuardrailRules,
  type ZdrGroup,
} from "./guardrail-policy.js";
import { SCOPED_BUILTIN } from "./guardrail-record.js";
import { checkPattern } from "./regex-safety.js";

/**
 * A guardrail's create or update body, checked beyond its schema (docs/guardrails.md "Fields and
 * validation"): every refusal is a 400 naming the field, and nothing is written.
 */
export interface GuardrailInput {
  name?: string;
  description?: string | null;
  workspace_id?: string;
  limit_usd?: number | null;
  reset_interval?: GuardrailResetInterval | null;
  include_byok_in_budgets?: boolean;
  allowed_models?: string[] | null;
  ignored_models?: string[] | null;
  allowed_providers?: string[] | null;
  ignored_providers?: string[] | null;
  allowed_data_regions?: DataRegion[] | null;
  enforce_zdr?: boolean | null;
  enforce_zdr_anthropic?: boolean | null;
  enforce_zdr_openai?: boolean | null;
  enforce_zdr_google?: boolean | null;
  enforce_zdr_xai?: boolean | null;
  enforce_zdr_other?: boolean | null;
  enable_free_model_publication?: boolean | null;
  enable_free_model_training?: boolean | null;
  enable_paid_model_training?: boolean | null;
  content_filters?: { pattern: string; action: GuardrailAction; label?: string | null }[] | null;
  content_filter_builtins?:
    { slug: BuiltinFilterSlug; action: GuardrailAction; label?: string | null; scan_scope?: string }[] | null;
}

/** The gateway's catalog, as names: the canonical id of a model or provider, or null for none. */
export interface CatalogNames {
  /** A model id (slug or canonical slug) → its canonical id. */
  model(id: string): string | null;
  /** A provider slug or display name → its slug. */
  provider(name: string): string | null;
}

/** What a guardrail holds besides identity and placement: what a write starts from and produces. */
export interface GuardrailState {
  name: string;
  description: string | null;
  limitNano: bigint | null;
  resetInterval: GuardrailResetInterval | null;
  includeByok: boolean;
  rules: GuardrailRules;
}

/** The refusal of an unsafe custom pattern carries this code (and the field) in its metadata. */
export const INVALID_REGEX_PATTERN = "invalid_regex_pattern";

function checkName(name: string): string {
  if (name.trim() === "") throw invalid("name: must not be blank");
  return name;
}

/** Each entry resolved to its canonical name, duplicates dropped (first kept). */
function canonicalList(
  field: string,
  given: string[] | null,
  resolve: (s: string) => string | null,
  what: string,
): string[] | null {
  if (given === null) return null;
  if (given.length === 0) throw invalid(`${field}: must have at least one element, or be null`);
  const out = new Set<string>();
  given.forEach((s, i) => {
    const canonical = resolve(s);
    if (canonical === null) throw invalid(`${field}[${i}]: ${s} is not ${what}`);
    out.add(canonical);
  });
  return [...out];
}

/**
 * The budget after a write. On create, `limit_usd` and `reset_interval` come together or not at
 * all. On update, null in either removes the budget; a number or an interval alone changes that
 * half of an existing budget, and is refused when there is none.
 */
function budgetOf(
  input: GuardrailInput,
  current: Pick<GuardrailState, "limitNano" | "resetInterval">,
  creating: boolean,
): Pick<GuardrailState, "limitNano" | "resetInterval"> {
  const { limit_usd: limit, reset_interval: interval } = input;
  if (limit === undefined && interval === undefined) {
    return { limitNano: current.limitNano, resetInterval: current.resetInterval };
  }
  const both = (l: number | null | undefined, r: GuardrailResetInterval | null | undefined) => {
    if ((l ?? null) === null && (r ?? null) === null) return { limitNano: null, resetInterval: null };
    if ((l ?? null) === null) throw invalid("limit_usd: is required with reset_interval");
    if ((r ?? null) === null) throw invalid("reset_interval: is required with limit_usd");
    return { limitNano: usdToNano(l!), resetInterval: r! };
  };
  if (creating || (limit !== undefined && interval !== undefined)) return both(limit, interval);
  if (limit === null || interval === null) return { limitNano: null, resetInterval: null };
  if (current.limitNano === null) {
    throw invalid(
      limit !== undefined
        ? "reset_interval: is required with limit_usd (the guardrail has no budget yet)"
        : "limit_usd: is required with reset_interval (the guardrail has no budget yet)",
    );
  }
  return limit !== undefined
    ? { limitNano: usdToNano(limit), resetInterval: current.resetInterval }
    : { limitNano: current.limitNano, resetInterval: interval! };
}

function contentFilters(
  given: NonNullable<GuardrailInput["content_filters"]> | null,
): ContentFilterRule[] | null {
  if (given === null) return null;
  return given.map((f, i) => {
    const reason = checkPattern(f.pattern);
    if (reason !== null) {
      const field = `content_filters[${i}].pattern`;
      throw invalid(`${field}: ${reason}`, { code: INVALID_REGEX_PATTERN, field });
    }
    return { pattern: f.pattern, action: f.action, label: f.label ?? null };
  });
}

function builtins(
  given: NonNullable<GuardrailInput["content_filter_builtins"]> | null,
): BuiltinFilterRule[] | null {
  if (given === null) return null;
  const seen = new Set<string>();
  return given.map((b, i) => {
    if (seen.has(b.slug)) throw invalid(`content_filter_builtins[${i}].slug: ${b.slug} is listed twice`);
    seen.add(b.slug);
    if (b.scan_scope !== undefined && b.slug !== SCOPED_BUILTIN) {
      throw invalid(`content_filter_builtins[${i}].scan_scope: applies only to ${SCOPED_BUILTIN}`);
    }
    // `label` is the system's (BUILTIN_LABELS): ignored on input.
    return {
      slug: b.slug,
      action: b.action,
      scanScope: (b.scan_scope as BuiltinFilterRule["scanScope"]) ?? null,
    };
  });
}

/**
 * The ZDR flags after a write: each group's flag as given, and the deprecated `enforce_zdr`, when
 * given, copied into every group flag the same body leaves out (what the hosted original does).
 */
function zdrOf(
  input: GuardrailInput,
  current: GuardrailRules,
): Pick<GuardrailRules, "enforceZdr" | "enforceZdrGroups"> {
  const groups = { ...current.enforceZdrGroups };
  const given = (g: ZdrGroup): boolean | null | undefined => input[`enforce_zdr_${g}`];
  for (const g of ZDR_GROUPS) {
    const v = given(g);
    if (v !== undefined) groups[g] = v;
    else if (input.enforce_zdr !== undefined) groups[g] = input.enforce_zdr;
  }
  return {
    enforceZdr: input.enforce_zdr === undefined ? current.enforceZdr : input.enforce_zdr,
    enforceZdrGroups: groups,
  };
}

/** `given` when the body has the field, else what is stored. */
const keep = <T>(given: T | undefined, current: T): T => (given === undefined ? current : given);

/** `check(given)` when the body has the field, else what is stored. */
const replace = <G, T>(given: G | undefined, current: T, check: (g: G) => T): T =>
  given === undefined ? current : check(given);

const MODEL = "a model this gateway serves (GET /api/v1/models lists them)";
const PROVIDER = "a provider this gateway routes to (GET /api/v1/providers lists them)";

/**
 * The state after applying a body to `current` (an empty state on create). Fields left out keep
 * their value; collections are replaced whole; null clears. Throws a 400 naming the first field
 * at fault (in the order of the body's fields above).
 */
export function applyGuardrailInput(
  current: GuardrailState,
  input: GuardrailInput,
  names: CatalogNames,
  creating: boolean,
): GuardrailState {
  const r = current.rules;
  const model = (s: string) => names.model(s);
  const provider = (s: string) => names.provider(s);
  const region = (s: string) => s;
  const name = replace(input.name, current.name, checkName);
  const budget = budgetOf(input, current, creating);
  const rules: GuardrailRules = {
    allowedModels: replace(input.allowed_models, r.allowedModels, (v) =>
      canonicalList("allowed_models", v, model, MODEL),
    ),
    ignoredModels: replace(input.ignored_models, r.ignoredModels, (v) =>
      canonicalList("ignored_models", v, model, MODEL),
    ),
    allowedProviders: replace(input.allowed_providers, r.allowedProviders, (v) =>
      canonicalList("allowed_providers", v, provider, PROVIDER),
    ),
    ignoredProviders: replace(input.ignored_providers, r.ignoredProviders, (v) =>
      canonicalList("ignored_providers", v, provider, PROVIDER),
    ),
    allowedDataRegions: replace(
      input.allowed_data_regions,
      r.allowedDataRegions,
      (v) => canonicalList("allowed_data_regions", v, region, "a data region") as DataRegion[] | null,
    ),
    ...zdrOf(input, r),
    enableFreeModelPublication: keep(input.enable_free_model_publication, r.enableFreeModelPublication),
    enableFreeModelTraining: keep(input.enable_free_model_training, r.enableFreeModelTraining),
    enablePaidModelTraining: keep(input.enable_paid_model_training, r.enablePaidModelTraining),
    contentFilters: replace(input.content_filters, r.contentFilters, contentFilters),
    contentFilterBuiltins: replace(input.content_filter_builtins, r.contentFilterBuiltins, builtins),
  };
  return {
    name,
    description: keep(input.description, current.description),
    ...budget,
    includeByok: keep(input.include_byok_in_budgets, current.includeByok),
    rules,
  };
}
