import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { deleteWorkspace } from "../../domain/workspaces/delete-workspace.js";
import {
  createWorkspace,
  getWorkspace,
  listWorkspaces,
  updateWorkspace,
} from "../../domain/workspaces/workspace-service.js";
import { changingGuardrails, changingWorkspace } from "../../domain/policy/changing.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { DeletedResponse } from "../schemas/common.js";
import {
  CreateWorkspaceBody,
  DeleteWorkspaceQuery,
  ListWorkspacesQuery,
  UpdateWorkspaceBody,
  WorkspaceListResponse,
  WorkspaceRefParams,
  WorkspaceResponse,
} from "../schemas/workspaces.js";

/** Workspaces: create, list, read, update, delete. `{id}` is the workspace UUID or slug. */
export async function workspacesRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: "management" as const, rateLimit: routeLimit(ctx.config.rateLimit.management) };
  const tags = ["Workspaces"];

  app.post(
    "/workspaces",
    {
      config,
      schema: {
        tags,
        operationId: "createWorkspace",
        body: CreateWorkspaceBody,
        response: { 201: WorkspaceResponse },
      },
    },
    async (request, reply) => {
      const data = await createWorkspace(ctx.store, ctx.clock, principal(request), request.body);
      ctx.policy.workspaceChanged(data.id);
      return reply.status(201).send({ data });
    },
  );

  app.get(
    "/workspaces",
    {
      config,
      schema: {
        tags,
        operationId: "listWorkspaces",
        querystring: ListWorkspacesQuery,
        response: { 200: WorkspaceListResponse },
      },
    },
    async (request) =>
      listWorkspaces(
        ctx.store,
        principal(request).organizationId,
        request.query.offset ?? 0,
        request.query.limit ?? 50,
      ),
  );

  app.get(
    "/workspaces/:id",
    {
      config,
      schema: {
        tags,
        operationId: "getWorkspace",
        params: WorkspaceRefParams,
        response: { 200: WorkspaceResponse },
      },
    },
    async (request) => ({
      data: await getWorkspace(ctx.store, principal(request).organizationId, request.params.id),
    }),
  );

  app.patch(
    "/workspaces/:id",
    {
      config,
      schema: {
        tags,
        operationId: "updateWorkspace",
        params: WorkspaceRefParams,
        body: UpdateWorkspaceBody,
        response: { 200: WorkspaceResponse },
      },
    },
    async (request) => {
      const org = principal(request).organizationId;
      return {
        data: await changingWorkspace(ctx.policy, org, request.params.id, () =>
          updateWorkspace(ctx.store, ctx.clock, org, request.params.id, request.body),
        ),
      };
    },
  );

  app.delete(
    "/workspaces/:id",
    {
      config,
      schema: {
        tags,
        operationId: "deleteWorkspace",
        params: WorkspaceRefParams,
        querystring: DeleteWorkspaceQuery,
        response: { 200: DeletedResponse },
      },
    },
    async (request) => {
      const org = principal(request).organizationId;
      // Its default guardrail and its keys' guardrail assignments go with it.
      await changingGuardrails(ctx.policy, org, () =>
        changingWorkspace(ctx.policy, org, request.params.id, () =>
          deleteWorkspace(
            ctx.store,
            ctx.clock,
            org,
            request.params.id,
            request.query.confirm_default_workspace_deletion === true,
          ),
        ),
      );
      return { deleted: true as const };
    },
  );
}
