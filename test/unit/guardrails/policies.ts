import type { GuardrailPolicy, GuardrailRules } from "../../../src/domain/guardrails/guardrail-policy.js";

/** Rules that restrict nothing. */
export const OPEN_RULES: GuardrailRules = {
  allowedModels: null,
  ignoredModels: null,
  allowedProviders: null,
  ignoredProviders: null,
  allowedDataRegions: null,
  enforceZdr: null,
  enforceZdrGroups: { anthropic: null, openai: null, google: null, xai: null, other: null },
  enableFreeModelPublication: null,
  enableFreeModelTraining: null,
  enablePaidModelTraining: null,
  contentFilters: null,
  contentFilterBuiltins: null,
};

/** A guardrail with the given rules (and budget), as the policy cache holds one. */
export function guardrail(
  id: string,
  rules: Partial<GuardrailRules> = {},
  budget: Partial<Pick<GuardrailPolicy, "limitNano" | "resetInterval" | "includeByokInBudgets">> = {},
): GuardrailPolicy {
  return {
    id,
    organizationId: "org-1",
    workspaceId: "ws-1",
    name: `Guardrail ${id}`,
    isDefault: false,
    limitNano: budget.limitNano ?? null,
    resetInterval: budget.resetInterval ?? null,
    includeByokInBudgets: budget.includeByokInBudgets ?? false,
    rules: { ...OPEN_RULES, ...rules },
  };
}
