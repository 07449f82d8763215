import { DomainError } from "../../domain/errors.js";
import type { GuardrailBudget } from "../../domain/guardrails/guardrail-policy.js";
import type { Attempt } from "../chat/attempts.js";

/** Which guardrail and rule keep an attempt from being made. */
export interface GuardrailRefusal {
  guardrailId: string;
  guardrailName: string;
  /** allowed_models, ignored_models, allowed_providers, ignored_providers, allowed_data_regions, enforce_zdr_<group>. */
  rule: string;
  /** The model, provider or data region the rule refuses. */
  subject: string;
}

/**
 * The guardrails of one model request, combined (docs/guardrails.md): what the data plane asks of
 * them once the request's content has been scanned (and redacted where a filter says so).
 */
export interface RequestGuardrails {
  /** Why this attempt may not be made, or null when every guardrail allows it. */
  refusalOf(a: Attempt): GuardrailRefusal | null;
  /** The guardrail budgets the request counts against (reserved like key limits). */
  budgets: readonly GuardrailBudget[];
  /** Labels of `flag` matches, recorded on the generation. */
  flags: readonly string[];
  /** A rule acted on the request (a redaction or a flag): the record's guardrail_invoked. */
  invoked: boolean;
}

/** What a refused attempt's subject is: its name in the message and its key in the metadata. */
const SUBJECT: Record<string, { label: string; key: string }> = {
  allowed_models: { label: "model", key: "model" },
  ignored_models: { label: "model", key: "model" },
  allowed_providers: { label: "provider", key: "provider" },
  ignored_providers: { label: "provider", key: "provider" },
  allowed_data_regions: { label: "data region", key: "region" },
};
const ZDR_SUBJECT = { label: "provider", key: "provider" };

/** The 403 for a request that no attempt allowed by its guardrails can serve. */
export function routingRefusal(r: GuardrailRefusal, refusedCount: number): DomainError {
  const what = SUBJECT[r.rule] ?? (r.rule.startsWith("enforce_zdr") ? ZDR_SUBJECT : SUBJECT.allowed_models!);
  const also =
    refusedCount > 1
      ? ` (and ${refusedCount - 1} other endpoint${refusedCount > 2 ? "s" : ""} of the request)`
      : "";
  return new DomainError(
    "forbidden",
    `Request blocked by guardrail '${r.guardrailName}' (${r.rule}): ${what.label} ${r.subject} is not allowed${also}`,
    { guardrail_id: r.guardrailId, rule: r.rule, [what.key]: r.subject },
  );
}

/**
 * The attempts the guardrails allow, in order: a `models` fallback list or `provider.order` is
 * filtered, not refused, so long as something is left; when nothing is, the 403 names the first
 * refused attempt's guardrail and rule.
 */
export function allowedAttempts(g: RequestGuardrails | undefined, attempts: Attempt[]): Attempt[] {
  if (!g || attempts.length === 0) return attempts;
  const out: Attempt[] = [];
  let first: GuardrailRefusal | null = null;
  let refused = 0;
  for (const a of attempts) {
    const r = g.refusalOf(a);
    if (r === null) out.push(a);
    else {
      first ??= r;
      refused++;
    }
  }
  if (out.length === 0 && first !== null) throw routingRefusal(first, refused);
  return out;
}
