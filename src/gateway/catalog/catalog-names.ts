import type { CatalogNames } from "../../domain/guardrails/guardrail-input.js";
import type { Catalog } from "./catalog.js";

/**
 * The catalog's canonical names for what a client writes: a model id exactly, or in another case;
 * a provider by its slug or display name, in any case (as `provider.only` and `provider.order`
 * name them: src/gateway/chat/attempts.ts). Built once per catalog (which is frozen).
 */
export function catalogNames(catalog: Catalog): CatalogNames {
  const models = new Map<string, string>();
  for (const id of catalog.models.keys()) if (!models.has(id.toLowerCase())) models.set(id.toLowerCase(), id);
  const providers = new Map<string, string>();
  for (const p of catalog.providers.values()) {
    providers.set(p.slug.toLowerCase(), p.slug);
    if (!providers.has(p.name.trim().toLowerCase())) providers.set(p.name.trim().toLowerCase(), p.slug);
  }
  return {
    model: (id) => (catalog.models.has(id) ? id : (models.get(id.toLowerCase()) ?? null)),
    provider: (name) => providers.get(name.trim().toLowerCase()) ?? null,
  };
}
