import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Static } from "typebox";
import {
  filterModels,
  listModels,
  listProviders,
  modelEndpointsView,
  oneModelView,
  type ModelFilter,
} from "../../gateway/catalog/catalog-views.js";
import { notFound } from "../../domain/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { getGeneration } from "../../gateway/generation-lookup.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { GenerationQuery, ModelsCountQuery, ModelsQuery } from "../schemas/gateway.js";

/** A comma-separated query value (the SDK sends `tools%2Ctemperature`) as its non-empty items. */
const commaList = (v: string | undefined): string[] =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

/**
 * GET /models, /models/count, /model/{id}, /models/{id}/endpoints, /providers (public: what this
 * installation routes to), /models/user (the same list, for a key) and /generation.
 */
export async function gatewayReadRoutes(root: FastifyInstance, ctx: AppContext, gw: Gateway): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Models and generations"];
  const publicLimit = { auth: "none" as const, rateLimit: routeLimit(ctx.config.rateLimit.management) };
  const filterOf = (q: Static<typeof ModelsCountQuery>): ModelFilter => ({
    supportedParameters: commaList(q.supported_parameters),
    outputModalities: commaList(q.output_modalities),
    inputModalities: commaList(q.input_modalities),
    text: q.q?.trim(),
    providers: commaList(q.providers),
    authors: commaList(q.model_authors),
    minContext: q.context,
    prompt: { min: q.min_price, max: q.max_price },
    completion: { min: q.min_output_price, max: q.max_output_price },
  });
  const list = async (request: { query: Static<typeof ModelsQuery> }) =>
    listModels(
      gw.catalog,
      request.query.offset ?? 0,
      request.query.limit ?? 500,
      filterOf(request.query),
      request.query.sort,
    );
  app.get(
    "/models",
    { config: publicLimit, schema: { tags, operationId: "getModels", querystring: ModelsQuery } },
    list,
  );
  app.get(
    "/models/count",
    { config: publicLimit, schema: { tags, operationId: "listModelsCount", querystring: ModelsCountQuery } },
    async (request) => ({ data: { count: filterModels(gw.catalog, filterOf(request.query)).length } }),
  );
  // The models the caller's key can use: every model of the catalog (no key is limited to some).
  app.get(
    "/models/user",
    {
      config: { auth: "any", rateLimit: routeLimit(ctx.config.rateLimit.management) },
      schema: { tags, operationId: "listModelsUser", querystring: ModelsQuery },
    },
    list,
  );
  // /models/{author}/{slug}/endpoints; a model id may hold more than one slash (author/a/b).
  app.get(
    "/models/*",
    { config: publicLimit, schema: { tags, operationId: "listEndpoints" } },
    async (request) => {
      const rest = (request.params as { "*": string })["*"];
      const id = rest.endsWith("/endpoints") ? rest.slice(0, -"/endpoints".length) : null;
      const model = id === null ? undefined : gw.catalog.models.get(id);
      if (!model) throw notFound("Model");
      return { data: modelEndpointsView(gw.catalog, model) };
    },
  );
  app.get("/model/*", { config: publicLimit, schema: { tags, operationId: "getModel" } }, async (request) => {
    const model = gw.catalog.models.get((request.params as { "*": string })["*"]);
    if (!model) throw notFound("Model");
    return { data: oneModelView(model) };
  });
  app.get("/providers", { config: publicLimit, schema: { tags, operationId: "listProviders" } }, async () =>
    listProviders(gw.catalog),
  );
  app.get(
    "/generation",
    {
      config: { auth: "any", rateLimit: routeLimit(ctx.config.rateLimit.management) },
      schema: { tags, operationId: "getGeneration", querystring: GenerationQuery },
    },
    async (request) => ({ data: await getGeneration(ctx.store.db, principal(request), request.query.id) }),
  );
}
