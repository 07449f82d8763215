import { DomainError, invalid } from "../../domain/errors.js";
import type { Catalog, ModelEndpoint, ModelEntry, ProviderEntry } from "../catalog/catalog.js";
import { requireModelKind, type ModelKind } from "../catalog/model-kind.js";
import { lacking } from "../catalog/parameters.js";
import { usdPerTokenToNanoPerMTok } from "../../lib/money.js";

/** One way to serve the request: a model at one of its endpoints. */
export interface Attempt {
  model: ModelEntry;
  endpoint: ModelEndpoint;
  provider: ProviderEntry;
  /** The organization's own key for this provider (BYOK), when the attempt uses one. */
  byok?: { id: string; secret: string };
}

export interface ProviderPrefs {
  order?: string[] | null;
  only?: string[] | null;
  ignore?: string[] | null;
  allow_fallbacks?: boolean | null;
  require_parameters?: boolean | null;
  /** USD per million tokens (numbers or decimal strings): endpoints priced above are left out. */
  max_price?: { prompt?: unknown; completion?: unknown } | null;
  /** "price" (or `{by: "price"}`): cheapest first, when there is no `order`. */
  sort?: unknown;
}

/** A max_price field as nano-USD per million tokens × 1e6 (comparable with a price × 1e6); null: none. */
function capOf(v: unknown, field: string): bigint | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" && typeof v !== "string")
    throw invalid(`${field}: must be a number of USD per million tokens`);
  try {
    // USD per million tokens read as "USD per token" is the price × 1e6: exact, no float product.
    return usdPerTokenToNanoPerMTok(v);
  } catch (err) {
    throw invalid(`${field}: ${(err as Error).message} (USD per million tokens)`);
  }
}

const sortsByPrice = (sort: unknown): boolean =>
  sort === "price" ||
  (typeof sort === "object" && sort !== null && (sort as { by?: unknown }).by === "price");

const norm = (s: string) => s.trim().toLowerCase();

/**
 * The ordered attempts for `model` then each of `models` (duplicates dropped): per model, its
 * endpoints filtered by `only` / `ignore` (provider slug or display name, any case) and sorted
 * with `order`'s providers first in that order. With `allow_fallbacks: false`, only the providers
 * named in `order` are used (or, without `order`, the model's first endpoint). With
 * `require_parameters: true`, only endpoints that honour every one of `used` (the request's
 * parameters, parameters.ts) are kept; by default a parameter an endpoint lacks is ignored there.
 * `max_price` leaves out endpoints priced above it; `sort: "price"` (without `order`) puts the
 * cheapest first (prompt + completion price per token; ties keep the file's order).
 * Every model must be of `kind` (chat unless said): a chat request naming an embedding model, or
 * the reverse, is a 400 naming `model` or `models` (model-kind.ts).
 */
export function planAttempts(
  catalog: Catalog,
  model: string | undefined,
  models: readonly string[] | undefined,
  prefs: ProviderPrefs | null | undefined,
  used: readonly string[] = [],
  kind: ModelKind = "chat",
): Attempt[] {
  // Nearly every request names one model and no provider preferences: its plan depends only on
  // the catalog (frozen once built), so it is made once per model and copied.
  if (model !== undefined && (models === undefined || models.length === 0) && !prefs) {
    let plans = plainPlans.get(catalog);
    if (plans === undefined) plainPlans.set(catalog, (plans = new Map<string, readonly Attempt[]>()));
    const id = `${kind}\u0000${model}`;
    let plan = plans.get(id);
    if (plan === undefined) {
      plan = plannedAttempts(catalog, model, undefined, null, [], kind);
      if (plans.size < PLAIN_PLANS_MAX) plans.set(id, plan);
    }
    return plan.slice();
  }
  return plannedAttempts(catalog, model, models, prefs, used, kind);
}

/** Plans of requests naming one model without preferences, per catalog (planAttempts). */
const plainPlans = new WeakMap<Catalog, Map<string, readonly Attempt[]>>();
/** Models whose plain plan is kept per catalog at most (a catalog lists far fewer). */
const PLAIN_PLANS_MAX = 10_000;

function plannedAttempts(
  catalog: Catalog,
  model: string | undefined,
  models: readonly string[] | undefined,
  prefs: ProviderPrefs | null | undefined,
  used: readonly string[],
  kind: ModelKind,
): Attempt[] {
  const ids = [...new Set([...(model !== undefined ? [model] : []), ...(models ?? [])])];
  if (ids.length === 0) throw invalid("model: is required (or models: a list of model ids)");
  const named = (list: string[] | null | undefined) => (list ? new Set(list.map(norm)) : null);
  const only = named(prefs?.only);
  const ignore = named(prefs?.ignore);
  const order = (prefs?.order ?? []).map(norm);
  const allowFallbacks = prefs?.allow_fallbacks ?? true;
  const requireParameters = prefs?.require_parameters === true && used.length > 0;
  /** Endpoints left out for lacking a parameter, and which: for the refusal when none is left. */
  const left: string[] = [];
  const honours = (a: Attempt): boolean => {
    const missing = requireParameters ? lacking(a.endpoint.supportedParameters, used) : [];
    if (missing.length === 0) return true;
    left.push(`${a.model.id} on ${a.provider.slug} lacks ${missing.join(", ")}`);
    return false;
  };
  const maxPrompt = capOf(prefs?.max_price?.prompt, "provider.max_price.prompt");
  const maxCompletion = capOf(prefs?.max_price?.completion, "provider.max_price.completion");
  /** Endpoints left out for their price: for the refusal when none is left. */
  const dear: string[] = [];
  const affordable = (a: Attempt): boolean => {
    const e = a.endpoint;
    const ok =
      (maxPrompt === null || e.promptPricePerMTokNano * 1_000_000n <= maxPrompt) &&
      (maxCompletion === null || e.completionPricePerMTokNano * 1_000_000n <= maxCompletion);
    if (!ok) dear.push(`${a.model.id} on ${a.provider.slug}`);
    return ok;
  };
  const byPrice = order.length === 0 && sortsByPrice(prefs?.sort);
  const out: Attempt[] = [];
  for (const [i, id] of ids.entries()) {
    const entry = catalog.models.get(id);
    const field = model !== undefined && i === 0 ? "model" : "models";
    if (!entry) {
      throw invalid(`${field}: ${id} is not a model this gateway serves (GET /api/v1/models lists them)`);
    }
    requireModelKind(entry, kind, field);
    const rankOf = (p: ProviderEntry) => {
      const a = order.indexOf(norm(p.slug));
      const b = order.indexOf(norm(p.name));
      const r = Math.min(a < 0 ? Infinity : a, b < 0 ? Infinity : b);
      return r;
    };
    let candidates = entry.endpoints
      .map((endpoint) => ({ model: entry, endpoint, provider: catalog.providers.get(endpoint.provider) }))
      .filter((a): a is Attempt => a.provider !== undefined)
      .filter((a) => !only || only.has(norm(a.provider.slug)) || only.has(norm(a.provider.name)))
      .filter((a) => !ignore || !(ignore.has(norm(a.provider.slug)) || ignore.has(norm(a.provider.name))))
      .filter(honours)
      .filter(affordable);
    const price = (a: Attempt) => a.endpoint.promptPricePerMTokNano + a.endpoint.completionPricePerMTokNano;
    candidates = candidates
      .map((a, j) => ({ a, j, r: rankOf(a.provider) }))
      .sort((x, y) => {
        if (x.r !== y.r) return x.r - y.r;
        if (byPrice && price(x.a) !== price(y.a)) return price(x.a) < price(y.a) ? -1 : 1;
        return x.j - y.j;
      })
      .map((x) => x.a);
    if (!allowFallbacks) {
      candidates =
        order.length > 0 ? candidates.filter((a) => rankOf(a.provider) !== Infinity) : candidates.slice(0, 1);
    }
    out.push(...candidates);
  }
  if (out.length === 0 && left.length > 0) {
    // The hosted original's answer: 404, no endpoint can handle the requested parameters.
    throw new DomainError(
      "not_found",
      `provider.require_parameters: no endpoint of the requested models honours every parameter of the request (${used.join(", ")}): ${left.slice(0, 4).join("; ")}. GET /api/v1/models lists each endpoint's supported_parameters`,
      { parameters: [...used] },
    );
  }
  if (out.length === 0 && dear.length > 0) {
    throw new DomainError(
      "not_found",
      `provider.max_price: no endpoint of the requested models is priced within it: ${dear.slice(0, 4).join("; ")} cost more. GET /api/v1/models lists each endpoint's prices`,
    );
  }
  if (out.length === 0) {
    throw invalid("provider: no provider of the requested models satisfies only / ignore / order");
  }
  return out;
}
