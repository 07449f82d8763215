import {
  ZDR_GROUPS,
  type GuardrailBudget,
  type DataRegion,
  type GuardrailPolicy,
  type ZdrGroup,
} from "../../domain/guardrails/guardrail-policy.js";
import { combineFilters, type EffectiveFilter } from "./combine-filters.js";

/**
 * The guardrails that govern one request, combined into one policy by the hosted original's
 * rules (the table below; for content filters, docs/guardrails-filters.md "How filters
 * combine"); nothing here reads a store. Every
 * restriction keeps which guardrail imposed it, so a refusal can say "guardrail X's
 * allowed_models". The result never allows what any part refuses:
 *
 * | Rule | Combined |
 * |---|---|
 * | `allowed_models`, `allowed_providers`, `allowed_data_regions` | intersected (every part's list must allow) |
 * | `ignored_models`, `ignored_providers` | unioned |
 * | `enforce_zdr_<group>` (a group's null flag filled by the deprecated `enforce_zdr`) | ORed per group |
 * | `enable_free_model_publication`, `enable_free_model_training`, `enable_paid_model_training` | forbidden when any part sets false |
 * | `content_filters`, `content_filter_builtins` | unioned; block > redact > flag |
 * | budgets | each kept on its own (below) |
 *
 * Budgets are not combined: each guardrail with a `limit_usd` is one budget, checked on its own.
 * A guardrail that reached the request through the key (assigned to it) or through the key's
 * workspace (the default guardrail) is held **per key**: each key governed by it has its own
 * spend against the limit. One that reached it through the key's creator (a member assignment) is
 * held **per member**: every key that member created spends against one room. The lowest
 * remaining room wins, like key limits and workspace budgets.
 */

export type GuardrailVia = "workspace" | "member" | "key";

/** One guardrail governing a request and how it reached it (guardrailsOfKey's answer). */
export interface GuardrailPart {
  guardrail: GuardrailPolicy;
  via: GuardrailVia;
}

/** Which guardrail imposed a restriction. */
export interface Provenance {
  guardrailId: string;
  guardrailName: string;
  via: GuardrailVia;
}

/** An allowlist of several parts: each part's list kept whole, and the values all of them allow. */
export interface Allowlists<T extends string> {
  lists: readonly { values: ReadonlySet<T>; by: Provenance }[];
  intersection: ReadonlySet<T>;
}

/** One guardrail budget of a request (held per key or per member: the reservation stores count it). */
export type { GuardrailBudget };

/** A combined policy: shared by every request it governs, so never changed once made. */
export interface EffectiveGuardrails {
  /** Nothing to enforce: no list, ZDR flag, filter or budget (the request path skips guardrails). */
  readonly empty: boolean;
  /** The guardrails combined, outermost first. */
  readonly parts: readonly Provenance[];
  /** Null: no part restricts. */
  readonly allowedModels: Allowlists<string> | null;
  /** Every model some part ignores, with the first part that does. */
  readonly ignoredModels: ReadonlyMap<string, Provenance>;
  readonly allowedProviders: Allowlists<string> | null;
  readonly ignoredProviders: ReadonlyMap<string, Provenance>;
  readonly allowedDataRegions: Allowlists<DataRegion> | null;
  /** Per model group: the first part that enforces zero data retention, or null. */
  readonly zdr: Readonly<Record<ZdrGroup, Provenance | null>>;
  /** The data-use permissions some part turns off (`enable_*: false`), with the first that does. */
  readonly forbids: Readonly<
    Record<"freeModelPublication" | "freeModelTraining" | "paidModelTraining", Provenance | null>
  >;
  readonly filters: readonly EffectiveFilter[];
  readonly budgets: readonly GuardrailBudget[];
}

const NO_ZDR: Record<ZdrGroup, Provenance | null> = {
  anthropic: null,
  openai: null,
  google: null,
  xai: null,
  other: null,
};

/** The policy of a request no guardrail governs. */
export const NO_EFFECTIVE_GUARDRAILS: EffectiveGuardrails = Object.freeze({
  empty: true,
  parts: [],
  allowedModels: null,
  ignoredModels: new Map(),
  allowedProviders: null,
  ignoredProviders: new Map(),
  allowedDataRegions: null,
  zdr: NO_ZDR,
  forbids: { freeModelPublication: null, freeModelTraining: null, paidModelTraining: null },
  filters: [],
  budgets: [],
});

/** Whether a combined policy enforces nothing (the request path's fast exit). */
export const isEmpty = (e: EffectiveGuardrails): boolean => e.empty;

function allowlists<T extends string>(
  parts: readonly { by: Provenance; list: readonly T[] | null | undefined }[],
): Allowlists<T> | null {
  const lists = parts.flatMap(({ by, list }) => (list == null ? [] : [{ values: new Set(list), by }]));
  const [first, ...rest] = lists;
  if (first === undefined) return null;
  const intersection = new Set([...first.values].filter((v) => rest.every((l) => l.values.has(v))));
  return { lists, intersection };
}

function unioned(parts: readonly { by: Provenance; list: readonly string[] | null | undefined }[]) {
  const out = new Map<string, Provenance>();
  for (const { by, list } of parts) for (const v of list ?? []) if (!out.has(v)) out.set(v, by);
  return out;
}

function combine(parts: readonly GuardrailPart[]): EffectiveGuardrails {
  if (parts.length === 0) return NO_EFFECTIVE_GUARDRAILS;
  const withBy = parts.map(({ guardrail: g, via }) => ({
    guardrail: g,
    rules: g.rules,
    by: { guardrailId: g.id, guardrailName: g.name, via },
  }));
  const listOf = <T>(pick: (r: GuardrailPolicy["rules"]) => T) =>
    withBy.map((p) => ({ by: p.by, list: pick(p.rules) }));
  const zdr = { ...NO_ZDR };
  for (const group of ZDR_GROUPS) {
    const first = withBy.find(
      (p) => (p.rules.enforceZdrGroups?.[group] ?? p.rules.enforceZdr ?? false) === true,
    );
    zdr[group] = first?.by ?? null;
  }
  const forbidding = (pick: (r: GuardrailPolicy["rules"]) => boolean | null | undefined) =>
    withBy.find((p) => pick(p.rules) === false)?.by ?? null;
  const budgets = new Map<string, GuardrailBudget>();
  for (const { guardrail: g, by } of withBy) {
    if (g.limitNano === null || g.resetInterval === null) continue;
    const holder = by.via === "member" ? "member" : "key";
    budgets.set(`${g.id}\u0000${holder}`, {
      guardrailId: g.id,
      name: g.name,
      holder,
      limitNano: g.limitNano,
      interval: g.resetInterval,
      includeByok: g.includeByokInBudgets,
    });
  }
  const e: Omit<EffectiveGuardrails, "empty"> = {
    parts: withBy.map((p) => p.by),
    allowedModels: allowlists(listOf((r) => r.allowedModels)),
    ignoredModels: unioned(listOf((r) => r.ignoredModels)),
    allowedProviders: allowlists(listOf((r) => r.allowedProviders)),
    ignoredProviders: unioned(listOf((r) => r.ignoredProviders)),
    allowedDataRegions: allowlists(listOf((r) => r.allowedDataRegions)),
    zdr,
    forbids: {
      freeModelPublication: forbidding((r) => r.enableFreeModelPublication),
      freeModelTraining: forbidding((r) => r.enableFreeModelTraining),
      paidModelTraining: forbidding((r) => r.enablePaidModelTraining),
    },
    filters: combineFilters(withBy),
    budgets: [...budgets.values()],
  };
  const empty =
    e.allowedModels === null &&
    e.ignoredModels.size === 0 &&
    e.allowedProviders === null &&
    e.ignoredProviders.size === 0 &&
    e.allowedDataRegions === null &&
    ZDR_GROUPS.every((g) => e.zdr[g] === null) &&
    Object.values(e.forbids).every((f) => f === null) &&
    e.filters.length === 0 &&
    e.budgets.length === 0;
  return { ...e, empty };
}

/**
 * Remembered combinations, keyed by the parts' policy objects in order: the policy cache hands
 * out the same objects until a guardrail changes (and never mutates them), so a key's requests
 * combine once and share one result, and with it one compiled content scanner (content-scan.ts).
 */
interface MemoNode {
  next: WeakMap<GuardrailPolicy, Map<GuardrailVia, MemoNode>>;
  value?: EffectiveGuardrails;
}
const memo: MemoNode = { next: new WeakMap() };

/** The parts (outermost first: workspace, member, key) combined into one policy. */
export function combineGuardrails(parts: readonly GuardrailPart[]): EffectiveGuardrails {
  if (parts.length === 0) return NO_EFFECTIVE_GUARDRAILS;
  let node = memo;
  for (const { guardrail, via } of parts) {
    let byVia = node.next.get(guardrail);
    if (byVia === undefined) node.next.set(guardrail, (byVia = new Map<GuardrailVia, MemoNode>()));
    let child = byVia.get(via);
    if (child === undefined) byVia.set(via, (child = { next: new WeakMap() }));
    node = child;
  }
  return (node.value ??= combine(parts));
}

export {
  allows,
  allowsModel,
  zdrGroupOf,
  type Candidate,
  type GuardrailRule,
  type Refusal,
} from "./allows.js";
