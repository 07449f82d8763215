import type { Guardrail } from "../api/guardrails.ts";
import { usd } from "./format.ts";

/** The guardrail vocabulary of the dashboard: built-in detectors, ZDR groups, flags, in words. */
export const BUILTINS = [
  ["email", "Email addresses"],
  ["phone", "Phone numbers"],
  ["ssn", "US social security numbers"],
  ["credit-card", "Credit card numbers"],
  ["ip-address", "IP addresses"],
  ["secrets", "Secrets (API keys, tokens)"],
  ["person-name", "Person names"],
  ["address", "Postal addresses"],
  ["regex-prompt-injection", "Prompt injection"],
] as const;
export type BuiltinSlug = (typeof BUILTINS)[number][0];
export const SCOPED_BUILTIN: BuiltinSlug = "regex-prompt-injection";

/** The label the server gives each built-in detector's matches (docs/guardrails.md). */
export const BUILTIN_LABELS: Record<BuiltinSlug, string> = {
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

export const ACTIONS = ["redact", "block", "flag"] as const;
export type FilterAction = (typeof ACTIONS)[number];

export const REGIONS = ["global", "europe", "us"] as const;
export type Region = (typeof REGIONS)[number];

export const ZDR_FLAGS = [
  ["enforce_zdr_anthropic", "Anthropic models"],
  ["enforce_zdr_openai", "OpenAI models"],
  ["enforce_zdr_google", "Google models"],
  ["enforce_zdr_xai", "xAI models"],
  ["enforce_zdr_other", "Other models"],
  ["enforce_zdr", "Every group (enforce_zdr, deprecated)"],
] as const;
export type ZdrFlag = (typeof ZDR_FLAGS)[number][0];

export const ENABLE_FLAGS = [
  ["enable_free_model_publication", "Free models whose endpoints publish prompts"],
  ["enable_free_model_training", "Free models whose endpoints train on data"],
  ["enable_paid_model_training", "Paid models whose endpoints train on data"],
] as const;
export type EnableFlag = (typeof ENABLE_FLAGS)[number][0];

/**
 * A guardrail's name as people read it: a workspace's default guardrail keeps the API's name
 * (`Workspace <id> Default`) until renamed, and is called "Workspace default" until then.
 */
export function guardrailTitle(g: Pick<Guardrail, "is_default" | "name">): string {
  return g.is_default && /^Workspace [0-9a-f-]{36} Default$/i.test(g.name) ? "Workspace default" : g.name;
}

/** The budget in words: "$25.00 daily (BYOK counted)", or "no budget". */
export function budgetText(g: Pick<Guardrail, "limit_usd" | "reset_interval" | "include_byok_in_budgets">) {
  if (g.limit_usd === null || g.reset_interval === null) return "no budget";
  return `${usd(g.limit_usd)} ${g.reset_interval}${g.include_byok_in_budgets ? " (BYOK counted)" : ""}`;
}

/** The rules besides the budget, one short phrase each; empty when the guardrail restricts nothing. */
export function rulesSummary(g: Guardrail): string[] {
  const out: string[] = [];
  const list = (label: string, v: string[] | null) => v && out.push(`${label}: ${v.join(", ")}`);
  list("models", g.allowed_models);
  list("never models", g.ignored_models);
  list("providers", g.allowed_providers);
  list("never providers", g.ignored_providers);
  list("regions", g.allowed_data_regions);
  const zdr = ZDR_FLAGS.filter(([f]) => g[f] === true).map(([f]) =>
    f === "enforce_zdr" ? "all (deprecated flag)" : f.slice("enforce_zdr_".length),
  );
  if (zdr.length) out.push(`zero data retention: ${zdr.join(", ")}`);
  for (const [f, label] of ENABLE_FLAGS) {
    if (g[f] !== null) out.push(`${label.toLowerCase()}: ${g[f] ? "allowed" : "not allowed"}`);
  }
  if (g.content_filters?.length)
    out.push(
      `${g.content_filters.length} custom filter${g.content_filters.length === 1 ? "" : "s"} (${g.content_filters
        .map((f) => `${f.label ?? "unlabelled"}: ${f.action}`)
        .join(", ")})`,
    );
  if (g.content_filter_builtins?.length)
    out.push(`detectors: ${g.content_filter_builtins.map((b) => `${b.slug} (${b.action})`).join(", ")}`);
  return out;
}
