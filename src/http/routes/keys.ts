import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { currentKey } from "../../domain/keys/current-key.js";
import { createKey, deleteKey, getKey, listKeys, updateKey } from "../../domain/keys/key-service.js";
import { changingGuardrails, changingKey } from "../../domain/policy/changing.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { DeletedResponse } from "../schemas/common.js";
import {
  CreateKeyBody,
  CreatedKeyResponse,
  CurrentKeyResponse,
  KeyHashParams,
  KeyListResponse,
  KeyResponse,
  ListKeysQuery,
  UpdateKeyBody,
} from "../schemas/keys.js";

/** API keys: create, list, read, update, delete (management keys), and GET /key (any key). */
export async function keysRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { store, clock } = ctx;
  const management = { auth: "management" as const, rateLimit: routeLimit(ctx.config.rateLimit.management) };
  const tags = ["API keys"];

  app.post(
    "/keys",
    { config: management, schema: { tags, body: CreateKeyBody, response: { 201: CreatedKeyResponse } } },
    async (request, reply) => {
      const created = await createKey(store, clock, principal(request).organizationId, request.body);
      // A lookup of this hash may be remembered as "no such key".
      ctx.policy.keyChanged(created.data.hash);
      return reply.status(201).send(created);
    },
  );

  app.get(
    "/keys",
    { config: management, schema: { tags, querystring: ListKeysQuery, response: { 200: KeyListResponse } } },
    async (request) => ({
      data: await listKeys(store, clock, principal(request).organizationId, request.query),
    }),
  );

  app.get(
    "/keys/:hash",
    { config: management, schema: { tags, params: KeyHashParams, response: { 200: KeyResponse } } },
    async (request) => ({
      data: await getKey(store.db, clock, principal(request).organizationId, request.params.hash),
    }),
  );

  app.patch(
    "/keys/:hash",
    {
      config: { auth: "management", rateLimit: routeLimit(ctx.config.rateLimit.keyUpdate) },
      schema: { tags, params: KeyHashParams, body: UpdateKeyBody, response: { 200: KeyResponse } },
    },
    async (request) => ({
      data: await changingKey(ctx.policy, request.params.hash, () =>
        updateKey(store.db, clock, principal(request).organizationId, request.params.hash, request.body),
      ),
    }),
  );

  app.delete(
    "/keys/:hash",
    { config: management, schema: { tags, params: KeyHashParams, response: { 200: DeletedResponse } } },
    async (request) => {
      const org = principal(request).organizationId;
      // The key's guardrail assignment goes with it.
      await changingGuardrails(ctx.policy, org, () =>
        changingKey(ctx.policy, request.params.hash, () => deleteKey(store, clock, org, request.params.hash)),
      );
      return { deleted: true as const };
    },
  );

  app.get(
    "/key",
    {
      config: { auth: "any", rateLimit: routeLimit(ctx.config.rateLimit.management) },
      schema: { tags, response: { 200: CurrentKeyResponse } },
    },
    async (request) => ({ data: await currentKey(store.db, ctx.policy, clock, principal(request)) }),
  );
}
