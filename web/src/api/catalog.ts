import { call } from "./client.ts";

/**
 * What this gateway serves, for pickers: every model (`GET /models?output_modalities=all`, chat and
 * embedding models alike) and every provider (`GET /providers`). Their answers have no schema in
 * the OpenAPI document, so they are read defensively; a failed read leaves the picker empty (the
 * API still names an unknown entry when the form is saved).
 */
export interface CatalogEntry {
  /** The id the API takes and returns (a model's canonical id, a provider's slug). */
  id: string;
  name: string;
}

const entries = (r: unknown, id: "id" | "slug"): CatalogEntry[] =>
  ((r as { data?: Record<string, unknown>[] } | null)?.data ?? [])
    .filter((e) => typeof e[id] === "string")
    .map((e) => ({ id: e[id] as string, name: typeof e.name === "string" ? e.name : (e[id] as string) }));

const MODELS_PAGE = 500;

export async function catalogModels(): Promise<CatalogEntry[]> {
  const all: CatalogEntry[] = [];
  for (let offset = 0; offset < 100_000; offset += MODELS_PAGE) {
    const page = entries(
      await call("get", "/models", { query: { output_modalities: "all", limit: MODELS_PAGE, offset } }),
      "id",
    );
    all.push(...page);
    if (page.length < MODELS_PAGE) break;
  }
  return all;
}

export const catalogProviders = async (): Promise<CatalogEntry[]> =>
  entries(await call("get", "/providers"), "slug");
