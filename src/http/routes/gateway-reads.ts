import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { listModels, listProviders } from "../../gateway/catalog-views.js";
import type { Gateway } from "../../gateway/gateway.js";
import { getGeneration } from "../../gateway/generation-lookup.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { GenerationQuery, ModelsQuery } from "../schemas/gateway.js";

/** A comma-separated query value (the SDK sends `tools%2Ctemperature`) as its non-empty items. */
const commaList = (v: string | undefined): string[] =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

/** GET /models, /providers (public: what this installation routes to) and /generation. */
export async function gatewayReadRoutes(root: FastifyInstance, ctx: AppContext, gw: Gateway): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Models and generations"];
  const publicLimit = { auth: "none" as const, rateLimit: routeLimit(ctx.config.rateLimit.management) };
  app.get(
    "/models",
    { config: publicLimit, schema: { tags, operationId: "getModels", querystring: ModelsQuery } },
    async (request) =>
      listModels(gw.catalog, request.query.offset ?? 0, request.query.limit ?? 500, {
        supportedParameters: commaList(request.query.supported_parameters),
      }),
  );
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
