import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { analyticsMeta } from "../../analytics/model/meta.js";
import { AnalyticsCache } from "../../analytics/service/cache.js";
import { runAnalyticsQuery } from "../../analytics/service/run-query.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { MetaResponse, QueryBody, QueryResponse } from "../schemas/analytics.js";

/** GET /analytics/meta and POST /analytics/query (management keys only). */
export async function analyticsRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: "management" as const, rateLimit: routeLimit(ctx.config.rateLimit.analytics) };
  const tags = ["Analytics"];
  const deps = {
    store: ctx.store,
    activity: ctx.activity,
    clock: ctx.clock,
    cache: new AnalyticsCache(ctx.config.analytics.cacheTtlMs),
    timeoutMs: ctx.config.analytics.queryTimeoutMs,
  };

  app.get(
    "/analytics/meta",
    { config, schema: { tags, operationId: "getAnalyticsMeta", response: { 200: MetaResponse } } },
    async () => ({ data: analyticsMeta() }),
  );

  app.post(
    "/analytics/query",
    {
      config,
      schema: { tags, operationId: "queryAnalytics", body: QueryBody, response: { 200: QueryResponse } },
      // The rows are built by runAnalyticsQuery from the model's columns only (strings, numbers,
      // null). fast-json-stringify checks every cell against the row schema's union, which costs
      // 2.4x JSON.stringify (0.6 vs 0.25 ms for 600 rows); the schema still documents the answer.
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    async (request) => ({
      data: await runAnalyticsQuery(deps, principal(request).organizationId, request.body),
    }),
  );
}
