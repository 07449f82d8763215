import type { FastifyInstance, FastifyRequest } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import {
  assignKeys,
  assignMembers,
  listKeyAssignments,
  listMemberAssignments,
  unassignKeys,
  unassignMembers,
} from "../../domain/guardrails/assignment-service.js";
import {
  createGuardrail,
  deleteGuardrail,
  getGuardrail,
  listGuardrails,
  updateGuardrail,
  type GuardrailDeps,
} from "../../domain/guardrails/guardrail-service.js";
import { changingGuardrails } from "../../domain/policy/changing.js";
import { catalogNames } from "../../gateway/catalog/catalog-names.js";
import type { Gateway } from "../../gateway/gateway.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { DeletedResponse } from "../schemas/common.js";
import {
  AssignedResponse,
  AssignmentListQuery,
  CreateGuardrailBody,
  GuardrailListQuery,
  GuardrailListResponse,
  GuardrailParams,
  GuardrailResponse,
  KeyAssignmentListResponse,
  KeyHashesBody,
  MemberAssignmentListResponse,
  MemberIdsBody,
  UnassignedResponse,
  UpdateGuardrailBody,
} from "../schemas/guardrails.js";

/**
 * /guardrails (SDK guardrails.*; docs/guardrails.md): management keys only. Every write forgets
 * the organization's guardrails in the policy cache once it has ended.
 */
export async function guardrailsRoutes(root: FastifyInstance, ctx: AppContext, gw: Gateway): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: "management" as const, rateLimit: routeLimit(ctx.config.rateLimit.management) };
  const tags = ["Guardrails"];
  const deps: GuardrailDeps = { store: ctx.store, clock: ctx.clock, names: catalogNames(gw.catalog) };
  const org = (r: FastifyRequest) => principal(r).organizationId;
  const changing = <T>(r: FastifyRequest, fn: () => Promise<T>) => changingGuardrails(ctx.policy, org(r), fn);

  app.get(
    "/guardrails",
    {
      config,
      schema: {
        tags,
        operationId: "listGuardrails",
        querystring: GuardrailListQuery,
        response: { 200: GuardrailListResponse },
      },
    },
    async (request) => listGuardrails(deps, org(request), request.query),
  );
  app.post(
    "/guardrails",
    {
      config,
      schema: {
        tags,
        operationId: "createGuardrail",
        body: CreateGuardrailBody,
        response: { 201: GuardrailResponse },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send({ data: await changing(request, () => createGuardrail(deps, org(request), request.body)) }),
  );
  app.get(
    "/guardrails/:id",
    {
      config,
      schema: {
        tags,
        operationId: "getGuardrail",
        params: GuardrailParams,
        response: { 200: GuardrailResponse },
      },
    },
    async (request) => ({ data: await getGuardrail(deps, org(request), request.params.id) }),
  );
  app.patch(
    "/guardrails/:id",
    {
      config,
      schema: {
        tags,
        operationId: "updateGuardrail",
        params: GuardrailParams,
        body: UpdateGuardrailBody,
        response: { 200: GuardrailResponse },
      },
    },
    async (request) => ({
      data: await changing(request, () =>
        updateGuardrail(deps, org(request), request.params.id, request.body),
      ),
    }),
  );
  app.delete(
    "/guardrails/:id",
    {
      config,
      schema: {
        tags,
        operationId: "deleteGuardrail",
        params: GuardrailParams,
        response: { 200: DeletedResponse },
      },
    },
    async (request) => changing(request, () => deleteGuardrail(deps, org(request), request.params.id)),
  );

  app.get(
    "/guardrails/assignments/keys",
    {
      config,
      schema: {
        tags,
        operationId: "listKeyAssignments",
        querystring: AssignmentListQuery,
        response: { 200: KeyAssignmentListResponse },
      },
    },
    async (request) => listKeyAssignments(deps, org(request), null, request.query),
  );
  app.get(
    "/guardrails/assignments/members",
    {
      config,
      schema: {
        tags,
        operationId: "listMemberAssignments",
        querystring: AssignmentListQuery,
        response: { 200: MemberAssignmentListResponse },
      },
    },
    async (request) => listMemberAssignments(deps, org(request), null, request.query),
  );
  app.get(
    "/guardrails/:id/assignments/keys",
    {
      config,
      schema: {
        tags,
        operationId: "listGuardrailKeyAssignments",
        params: GuardrailParams,
        querystring: AssignmentListQuery,
        response: { 200: KeyAssignmentListResponse },
      },
    },
    async (request) => listKeyAssignments(deps, org(request), request.params.id, request.query),
  );
  app.get(
    "/guardrails/:id/assignments/members",
    {
      config,
      schema: {
        tags,
        operationId: "listGuardrailMemberAssignments",
        params: GuardrailParams,
        querystring: AssignmentListQuery,
        response: { 200: MemberAssignmentListResponse },
      },
    },
    async (request) => listMemberAssignments(deps, org(request), request.params.id, request.query),
  );
  app.post(
    "/guardrails/:id/assignments/keys",
    {
      config,
      schema: {
        tags,
        operationId: "bulkAssignKeysToGuardrail",
        params: GuardrailParams,
        body: KeyHashesBody,
        response: { 200: AssignedResponse },
      },
    },
    async (request) =>
      changing(request, () =>
        assignKeys(
          deps,
          org(request),
          request.params.id,
          request.body.key_hashes,
          principal(request).keyHash,
        ),
      ),
  );
  app.post(
    "/guardrails/:id/assignments/keys/remove",
    {
      config,
      schema: {
        tags,
        operationId: "bulkUnassignKeysFromGuardrail",
        params: GuardrailParams,
        body: KeyHashesBody,
        response: { 200: UnassignedResponse },
      },
    },
    async (request) =>
      changing(request, () => unassignKeys(deps, org(request), request.params.id, request.body.key_hashes)),
  );
  app.post(
    "/guardrails/:id/assignments/members",
    {
      config,
      schema: {
        tags,
        operationId: "bulkAssignMembersToGuardrail",
        params: GuardrailParams,
        body: MemberIdsBody,
        response: { 200: AssignedResponse },
      },
    },
    async (request) =>
      changing(request, () =>
        assignMembers(
          deps,
          org(request),
          request.params.id,
          request.body.member_user_ids,
          principal(request).keyHash,
        ),
      ),
  );
  app.post(
    "/guardrails/:id/assignments/members/remove",
    {
      config,
      schema: {
        tags,
        operationId: "bulkUnassignMembersFromGuardrail",
        params: GuardrailParams,
        body: MemberIdsBody,
        response: { 200: UnassignedResponse },
      },
    },
    async (request) =>
      changing(request, () =>
        unassignMembers(deps, org(request), request.params.id, request.body.member_user_ids),
      ),
  );
}
