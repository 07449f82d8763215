import type {
  BuiltinFilterSlug,
  GuardrailAction,
  GuardrailPolicy,
} from "../../domain/guardrails/guardrail-policy.js";
import type { Provenance } from "./combine.js";

/** Which messages a filter reads: every text, or the user's own (docs/guardrails-filters.md "Scan scope"). */
export type ScanScope = "user_only" | "all_messages";

/** The label of a custom filter that names none. */
export const DEFAULT_CUSTOM_LABEL = "[REDACTED]";

/** One content filter of the combined policy: a built-in detector or a custom pattern. */
export interface EffectiveFilter {
  /** The built-in detector's slug, or null for a custom pattern. */
  builtin: BuiltinFilterSlug | null;
  /** The custom pattern (JavaScript regex source), or null for a built-in. */
  pattern: string | null;
  /** What a match is replaced with and counted as: `[EMAIL]`, a custom filter's own label. */
  label: string;
  action: GuardrailAction;
  /** `user_only` only for regex-prompt-injection; every other filter reads every text. */
  scope: ScanScope;
  /** The guardrail whose filter gave this action (the first of equals, outermost first). */
  by: Provenance;
}

const STRENGTH: Record<GuardrailAction, number> = { flag: 1, redact: 2, block: 3 };

/** How strong an action is: block 3 > redact 2 > flag 1 (an unknown action counts as a block). */
export function actionStrength(a: GuardrailAction): number {
  return STRENGTH[a] ?? 3;
}

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

/** A custom filter's label: its own when it has a non-empty one, else `[REDACTED]`. */
export function customLabel(label: string | null | undefined): string {
  return typeof label === "string" && label.length > 0 ? label : DEFAULT_CUSTOM_LABEL;
}

/**
 * The union of the parts' content filters. A filter is a built-in (by slug and scope) or a custom
 * pattern (by its exact source); one that several parts name keeps the strongest action (block >
 * redact > flag) and that part's label and provenance, the first part on a tie. Prompt-injection
 * scanning may hold two entries: `all_messages` for every text, and `user_only` kept only when it
 * is stronger on the user's messages than the `all_messages` one.
 */
export function combineFilters(
  parts: readonly { guardrail: GuardrailPolicy; by: Provenance }[],
): EffectiveFilter[] {
  const byKey = new Map<string, EffectiveFilter>();
  const offer = (key: string, f: EffectiveFilter): void => {
    const had = byKey.get(key);
    if (had === undefined || actionStrength(f.action) > actionStrength(had.action)) byKey.set(key, f);
  };
  for (const { guardrail, by } of parts) {
    for (const c of guardrail.rules.contentFilters ?? []) {
      const f = { builtin: null, pattern: c.pattern, label: customLabel(c.label), action: c.action, by };
      offer(`c\u0000${c.pattern}`, { ...f, scope: "all_messages" });
    }
    for (const b of guardrail.rules.contentFilterBuiltins ?? []) {
      const scope: ScanScope =
        b.slug === "regex-prompt-injection" && b.scanScope === "user_only" ? "user_only" : "all_messages";
      const label = BUILTIN_LABELS[b.slug] ?? `[${String(b.slug).toUpperCase()}]`;
      offer(`b\u0000${b.slug}\u0000${scope}`, {
        builtin: b.slug,
        pattern: null,
        label,
        action: b.action,
        scope,
        by,
      });
    }
  }
  const all = byKey.get("b\u0000regex-prompt-injection\u0000all_messages");
  const user = byKey.get("b\u0000regex-prompt-injection\u0000user_only");
  if (all && user && actionStrength(user.action) <= actionStrength(all.action)) {
    byKey.delete("b\u0000regex-prompt-injection\u0000user_only");
  }
  return [...byKey.values()];
}
