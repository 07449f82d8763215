import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { AnalyticsCache } from "../../analytics/service/cache.js";
import { userActivity } from "../../gateway/activity-report.js";
import {
  createByok,
  deleteByok,
  getByok,
  listByok,
  updateByok,
  type ByokDeps,
} from "../../domain/byok/byok-service.js";
import type { Gateway } from "../../gateway/gateway.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import {
  ByokListQuery,
  ByokListResponse,
  ByokParams,
  ByokResponse,
  CreateByokBody,
  UpdateByokBody,
} from "../schemas/byok.js";
import { DeletedResponse } from "../schemas/common.js";
import { ActivityQuery } from "../schemas/gateway.js";

/** /byok (the organization's own provider keys) and GET /activity; management keys only. */
export async function byokRoutes(root: FastifyInstance, ctx: AppContext, gw: Gateway): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: "management" as const, rateLimit: routeLimit(ctx.config.rateLimit.management) };
  const tags = ["BYOK"];
  const deps: ByokDeps = {
    db: ctx.store.db,
    clock: ctx.clock,
    secretBox: ctx.secretBox,
    isConfiguredProvider: (slug) => gw.catalog.providers.has(slug),
    changed: (org) => gw.byok.forget(org),
  };
  const org = (r: Parameters<typeof principal>[0]) => principal(r).organizationId;

  app.post(
    "/byok",
    {
      config,
      schema: { tags, operationId: "createByokKey", body: CreateByokBody, response: { 201: ByokResponse } },
    },
    async (request, reply) =>
      reply.status(201).send({ data: await createByok(deps, org(request), request.body) }),
  );
  app.get(
    "/byok",
    {
      config,
      schema: {
        tags,
        operationId: "listByokKeys",
        querystring: ByokListQuery,
        response: { 200: ByokListResponse },
      },
    },
    async (request) => listByok(deps, org(request), request.query),
  );
  app.get(
    "/byok/:id",
    {
      config,
      schema: { tags, operationId: "getByokKey", params: ByokParams, response: { 200: ByokResponse } },
    },
    async (request) => ({ data: await getByok(deps, org(request), request.params.id) }),
  );
  app.patch(
    "/byok/:id",
    {
      config,
      schema: {
        tags,
        operationId: "updateByokKey",
        params: ByokParams,
        body: UpdateByokBody,
        response: { 200: ByokResponse },
      },
    },
    async (request) => ({ data: await updateByok(deps, org(request), request.params.id, request.body) }),
  );
  app.delete(
    "/byok/:id",
    {
      config,
      schema: { tags, operationId: "deleteByokKey", params: ByokParams, response: { 200: DeletedResponse } },
    },
    async (request) => deleteByok(deps, org(request), request.params.id),
  );

  const analytics = {
    store: ctx.store,
    activity: ctx.activity,
    clock: ctx.clock,
    cache: new AnalyticsCache(ctx.config.analytics.cacheTtlMs),
    timeoutMs: ctx.config.analytics.queryTimeoutMs,
  };
  app.get(
    "/activity",
    {
      config: { auth: "management" as const, rateLimit: routeLimit(ctx.config.rateLimit.analytics) },
      schema: { tags: ["Analytics"], operationId: "getUserActivity", querystring: ActivityQuery },
    },
    async (request) =>
      userActivity(
        analytics,
        org(request),
        request.query,
        (slug) => gw.catalog.providers.get(slug)?.name ?? slug,
      ),
  );
}
