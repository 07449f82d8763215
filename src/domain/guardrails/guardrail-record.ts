import { Type, type Static } from "typebox";
import { nanoToUsd, toBigInt } from "../../lib/money.js";
import { Nullable, StringEnum } from "../../lib/typebox.js";
import type { GuardrailsTable } from "../../stores/schema.js";
import {
  BUILTIN_FILTER_SLUGS,
  DATA_REGIONS,
  GUARDRAIL_ACTIONS,
  GUARDRAIL_RESET_INTERVALS,
  ZDR_GROUPS,
  type BuiltinFilterSlug,
  type GuardrailRules,
} from "./guardrail-policy.js";

/** The wire form of a guardrail (the SDK's Guardrail; docs/guardrails.md "The guardrail record"). */

/** The system's label of each built-in detector: what redaction writes and the record shows. */
export const BUILTIN_LABELS: Readonly<Record<BuiltinFilterSlug, string>> = {
  email: "[EMAIL]",
  phone: "[PHONE]",
  ssn: "[SSN]",
  "credit-card": "[CREDIT_CARD]",
  "ip-address": "[IP_ADDRESS]",
  secrets: "[SECRET]",
  "person-name": "[PERSON_NAME]",
  address: "[ADDRESS]",
  "regex-prompt-injection": "[PROMPT_INJECTION]",
};

/** The built-in whose `scan_scope` means something; its default scope. */
export const SCOPED_BUILTIN: BuiltinFilterSlug = "regex-prompt-injection";
export const DEFAULT_SCAN_SCOPE = "all_messages";
export const SCAN_SCOPES = ["user_only", "all_messages"] as const;

const Strings = Nullable(Type.Array(Type.String()));
const Flag = Nullable(Type.Boolean());

export const ContentFilterSchema = Type.Object({
  pattern: Type.String(),
  action: StringEnum(GUARDRAIL_ACTIONS),
  label: Nullable(Type.String()),
});

/** `label` always, `scan_scope` only for regex-prompt-injection (the SDK refuses a null one). */
export const BuiltinFilterSchema = Type.Object({
  slug: StringEnum(BUILTIN_FILTER_SLUGS),
  action: StringEnum(GUARDRAIL_ACTIONS),
  label: Type.String(),
  scan_scope: Type.Optional(StringEnum(SCAN_SCOPES)),
});

export const GuardrailRecordSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  workspace_id: Nullable(Type.String()),
  is_default: Type.Boolean({
    description: "Gatehouse extension: a workspace's default guardrail (governs all of its traffic)",
  }),
  limit_usd: Nullable(Type.Number()),
  reset_interval: Nullable(StringEnum(GUARDRAIL_RESET_INTERVALS)),
  include_byok_in_budgets: Type.Boolean(),
  allowed_models: Strings,
  ignored_models: Strings,
  allowed_providers: Strings,
  ignored_providers: Strings,
  allowed_data_regions: Nullable(Type.Array(StringEnum(DATA_REGIONS))),
  enforce_zdr: Flag,
  enforce_zdr_anthropic: Flag,
  enforce_zdr_openai: Flag,
  enforce_zdr_google: Flag,
  enforce_zdr_xai: Flag,
  enforce_zdr_other: Flag,
  enable_free_model_publication: Flag,
  enable_free_model_training: Flag,
  enable_paid_model_training: Flag,
  content_filters: Nullable(Type.Array(ContentFilterSchema)),
  content_filter_builtins: Nullable(Type.Array(BuiltinFilterSchema)),
  created_at: Type.String(),
  updated_at: Nullable(Type.String()),
});
export type GuardrailRecord = Static<typeof GuardrailRecordSchema>;

/** No restriction at all: a new guardrail's rules, and a workspace default's before its first write. */
export const EMPTY_RULES: GuardrailRules = {
  allowedModels: null,
  ignoredModels: null,
  allowedProviders: null,
  ignoredProviders: null,
  allowedDataRegions: null,
  enforceZdr: null,
  enforceZdrGroups: Object.fromEntries(
    ZDR_GROUPS.map((g) => [g, null]),
  ) as GuardrailRules["enforceZdrGroups"],
  enableFreeModelPublication: null,
  enableFreeModelTraining: null,
  enablePaidModelTraining: null,
  contentFilters: null,
  contentFilterBuiltins: null,
};

/** The rules of a stored row (the JSON written by the guardrails service). */
export const rulesOf = (row: Pick<GuardrailsTable, "rules">): GuardrailRules =>
  JSON.parse(row.rules) as GuardrailRules;

export function toGuardrail(row: GuardrailsTable): GuardrailRecord {
  const r = rulesOf(row);
  const z = r.enforceZdrGroups;
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    workspace_id: row.workspace_id,
    is_default: Number(row.is_default) === 1,
    limit_usd: row.limit_nano === null ? null : nanoToUsd(toBigInt(row.limit_nano)),
    reset_interval: row.reset_interval as GuardrailRecord["reset_interval"],
    include_byok_in_budgets: Number(row.include_byok_in_budgets) === 1,
    allowed_models: r.allowedModels,
    ignored_models: r.ignoredModels,
    allowed_providers: r.allowedProviders,
    ignored_providers: r.ignoredProviders,
    allowed_data_regions: r.allowedDataRegions,
    enforce_zdr: r.enforceZdr,
    enforce_zdr_anthropic: z.anthropic,
    enforce_zdr_openai: z.openai,
    enforce_zdr_google: z.google,
    enforce_zdr_xai: z.xai,
    enforce_zdr_other: z.other,
    enable_free_model_publication: r.enableFreeModelPublication,
    enable_free_model_training: r.enableFreeModelTraining,
    enable_paid_model_training: r.enablePaidModelTraining,
    content_filters:
      r.contentFilters?.map((f) => ({ pattern: f.pattern, action: f.action, label: f.label })) ?? null,
    content_filter_builtins:
      r.contentFilterBuiltins?.map((b) => ({
        slug: b.slug,
        action: b.action,
        label: BUILTIN_LABELS[b.slug],
        ...(b.slug === SCOPED_BUILTIN ? { scan_scope: b.scanScope ?? DEFAULT_SCAN_SCOPE } : {}),
      })) ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
