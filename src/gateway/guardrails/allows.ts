import type { ZdrGroup } from "../../domain/guardrails/guardrail-policy.js";
import type { Allowlists, EffectiveGuardrails, Provenance } from "./combine.js";

/** The rule of a guardrail that refused a model or an endpoint (the 403's `metadata.rule`). */
export type GuardrailRule =
  | "allowed_models"
  | "ignored_models"
  | "allowed_providers"
  | "ignored_providers"
  | "allowed_data_regions"
  | `enforce_zdr_${ZdrGroup}`;

/** Why a combined policy refuses a candidate: which guardrail, which rule, and what it refused. */
export interface Refusal {
  guardrailId: string;
  guardrailName: string;
  rule: GuardrailRule;
  /** The model id, provider slug or data region refused (for ZDR: the provider slug). */
  subject: string;
}

/** One way to serve a request: a model at a provider's endpoint. */
export interface Candidate {
  /** The catalog's canonical model id (`openai/gpt-4o`). */
  modelId: string;
  providerSlug: string;
  /** The endpoint's data region (`us`, `europe`, `global`); null when unknown. */
  providerRegion: string | null;
  /** Whether the endpoint retains no data; null when unknown. */
  providerZdr: boolean | null;
  /** The model's ZDR group; by default `zdrGroupOf(modelId)`. */
  modelGroup?: ZdrGroup;
}

const refusal = (by: Provenance, rule: GuardrailRule, subject: string): Refusal => ({
  guardrailId: by.guardrailId,
  guardrailName: by.guardrailName,
  rule,
  subject,
});

/** The first part's list that lacks the value (null when every list has it, or there is none). */
function lacking<T extends string>(a: Allowlists<T> | null, value: string | null): Provenance | null {
  if (a === null) return null;
  if (value !== null && a.intersection.has(value as T)) return null;
  return a.lists.find((l) => value === null || !l.values.has(value as T))?.by ?? null;
}

/** The ZDR group a model belongs to, by its author (`anthropic/…`, `openai/…`, `google/…`, `x-ai/…`). */
export function zdrGroupOf(modelId: string): ZdrGroup {
  const slash = modelId.indexOf("/");
  const author = slash < 0 ? "" : modelId.slice(0, slash);
  if (author === "anthropic" || author === "openai" || author === "google") return author;
  return author === "x-ai" ? "xai" : "other";
}

/**
 * Whether the policy allows a model at all, whatever the provider: null, or the refusal naming
 * the guardrail. Model ids are compared exactly (the catalog's canonical ids, as guardrails store
 * them); the routing filters a `models` fallback list with it.
 */
export function allowsModel(e: EffectiveGuardrails, modelId: string): Refusal | null {
  if (e.empty) return null;
  const notAllowed = lacking(e.allowedModels, modelId);
  if (notAllowed) return refusal(notAllowed, "allowed_models", modelId);
  const ignored = e.ignoredModels.get(modelId);
  return ignored ? refusal(ignored, "ignored_models", modelId) : null;
}

/**
 * Whether the policy allows a candidate endpoint: null, or the first rule that refuses it, in
 * this order: the model lists, the provider lists (slugs compared exactly), the data regions (an
 * endpoint of unknown region is refused when regions are restricted), zero data retention (an
 * endpoint not known to retain nothing is refused when the model's group enforces it).
 */
export function allows(e: EffectiveGuardrails, c: Candidate): Refusal | null {
  if (e.empty) return null;
  const model = allowsModel(e, c.modelId);
  if (model) return model;
  const notAllowed = lacking(e.allowedProviders, c.providerSlug);
  if (notAllowed) return refusal(notAllowed, "allowed_providers", c.providerSlug);
  const ignored = e.ignoredProviders.get(c.providerSlug);
  if (ignored) return refusal(ignored, "ignored_providers", c.providerSlug);
  const region = lacking(e.allowedDataRegions, c.providerRegion);
  if (region) return refusal(region, "allowed_data_regions", c.providerRegion ?? "unknown");
  const group = c.modelGroup ?? zdrGroupOf(c.modelId);
  const zdr = e.zdr[group];
  if (zdr && c.providerZdr !== true) return refusal(zdr, `enforce_zdr_${group}`, c.providerSlug);
  return null;
}
