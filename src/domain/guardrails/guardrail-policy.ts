/**
 * Guardrails as the request path sees them (docs/guardrails.md): what the policy cache holds per
 * organization, read whole from the record store and combined per request
 * (src/gateway/guardrails/).
 */

export const GUARDRAIL_ACTIONS = ["redact", "block", "flag"] as const;
export type GuardrailAction = (typeof GUARDRAIL_ACTIONS)[number];

export const BUILTIN_FILTER_SLUGS = [
  "email",
  "phone",
  "ssn",
  "credit-card",
  "ip-address",
  "secrets",
  "person-name",
  "address",
  "regex-prompt-injection",
] as const;
export type BuiltinFilterSlug = (typeof BUILTIN_FILTER_SLUGS)[number];

export const DATA_REGIONS = ["global", "europe", "us"] as const;
export type DataRegion = (typeof DATA_REGIONS)[number];

export const GUARDRAIL_RESET_INTERVALS = ["daily", "weekly", "monthly"] as const;
export type GuardrailResetInterval = (typeof GUARDRAIL_RESET_INTERVALS)[number];

/** The model groups a ZDR flag applies to (by the model id's author: `anthropic/…`, …). */
export const ZDR_GROUPS = ["anthropic", "openai", "google", "xai", "other"] as const;
export type ZdrGroup = (typeof ZDR_GROUPS)[number];

/** One custom content filter (a JavaScript regex, checked at save: regex-safety.ts). */
export interface ContentFilterRule {
  pattern: string;
  action: GuardrailAction;
  label: string | null;
}

/** One built-in detector. `label` is the system's (e.g. `[EMAIL]`). */
export interface BuiltinFilterRule {
  slug: BuiltinFilterSlug;
  action: GuardrailAction;
  /** Only for regex-prompt-injection: scan the user's messages only, or all (the default). */
  scanScope: "user_only" | "all_messages" | null;
}

/**
 * What `guardrails.rules` holds (JSON), as written by the guardrails service: every field of the
 * wire record besides identity, name, description, budget and timestamps. Null: unrestricted.
 */
export interface GuardrailRules {
  allowedModels: string[] | null;
  ignoredModels: string[] | null;
  allowedProviders: string[] | null;
  ignoredProviders: string[] | null;
  allowedDataRegions: DataRegion[] | null;
  /** The deprecated `enforce_zdr` and each group's flag, as given (null: not given). */
  enforceZdr: boolean | null;
  enforceZdrGroups: Record<ZdrGroup, boolean | null>;
  enableFreeModelPublication: boolean | null;
  enableFreeModelTraining: boolean | null;
  enablePaidModelTraining: boolean | null;
  contentFilters: ContentFilterRule[] | null;
  contentFilterBuiltins: BuiltinFilterRule[] | null;
}

/** One guardrail, for the request path. */
export interface GuardrailPolicy {
  id: string;
  organizationId: string;
  workspaceId: string | null;
  name: string;
  /** A workspace's default guardrail (governs every request of the workspace). */
  isDefault: boolean;
  /** The budget in nano-USD and its interval, or both null. */
  limitNano: bigint | null;
  resetInterval: GuardrailResetInterval | null;
  includeByokInBudgets: boolean;
  rules: GuardrailRules;
}

/** An organization's guardrails and assignments: one policy-cache entry. */
export interface OrgGuardrails {
  /** By guardrail id (default guardrails by their derived id). */
  byId: ReadonlyMap<string, GuardrailPolicy>;
  /** Key hash → guardrail id. */
  keyAssignments: ReadonlyMap<string, string>;
  /** Member user id → guardrail id. */
  memberAssignments: ReadonlyMap<string, string>;
}

export const NO_GUARDRAILS: OrgGuardrails = {
  byId: new Map(),
  keyAssignments: new Map(),
  memberAssignments: new Map(),
};

/**
 * The guardrails that govern a key's requests, outermost first: its workspace's default guardrail
 * (when stored), its creator's member guardrail, its own. Empty when none applies.
 */
export function guardrailsOfKey(
  org: OrgGuardrails,
  key: { hash: string; creatorUserId: string | null },
  defaultGuardrailId: string,
): { guardrail: GuardrailPolicy; via: "workspace" | "member" | "key" }[] {
  if (org.byId.size === 0) return [];
  const out: { guardrail: GuardrailPolicy; via: "workspace" | "member" | "key" }[] = [];
  const ws = org.byId.get(defaultGuardrailId);
  if (ws) out.push({ guardrail: ws, via: "workspace" });
  const memberG = key.creatorUserId === null ? undefined : org.memberAssignments.get(key.creatorUserId);
  const m = memberG === undefined ? undefined : org.byId.get(memberG);
  if (m) out.push({ guardrail: m, via: "member" });
  const keyG = org.keyAssignments.get(key.hash);
  const k = keyG === undefined ? undefined : org.byId.get(keyG);
  if (k) out.push({ guardrail: k, via: "key" });
  return out;
}

/**
 * A guardrail budget a request counts against: held per key (the key's own guardrail, the
 * workspace's default guardrail) or per member (the guardrail of the member who created the key:
 * all of that member's keys together), never pooled across holders.
 */
export interface GuardrailBudget {
  guardrailId: string;
  name: string;
  holder: "key" | "member";
  limitNano: bigint;
  interval: GuardrailResetInterval;
  includeByok: boolean;
}
