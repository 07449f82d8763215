import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import {
  createMember,
  deleteMember,
  listMembers,
  updateMember,
} from "../../domain/members/member-service.js";
import {
  addWorkspaceMembers,
  listWorkspaceMembers,
  removeWorkspaceMembers,
} from "../../domain/members/workspace-member-service.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { DeletedResponse } from "../schemas/common.js";
import {
  AddedMembersResponse,
  CreateMemberBody,
  MemberListResponse,
  MemberParams,
  MemberResponse,
  MembersQuery,
  RemovedMembersResponse,
  UpdateMemberBody,
  UserIdsBody,
  WorkspaceMemberListResponse,
} from "../schemas/members.js";
import { WorkspaceRefParams } from "../schemas/workspaces.js";

const EXTENSION = "Gatehouse extension (the hosted API manages people through its identity provider). ";

/**
 * Organization members and workspace members (docs/members.md); management keys only. Member
 * writes tell the policy cache (`guardrailsChanged`): a member's guardrail assignment goes with it.
 */
export async function membersRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: "management" as const, rateLimit: routeLimit(ctx.config.rateLimit.management) };
  const { store, clock } = ctx;
  const org = (r: Parameters<typeof principal>[0]) => principal(r).organizationId;
  /** Runs a member write, then forgets the organization's guardrails whether or not it succeeded. */
  const changing = async <T>(organizationId: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } finally {
      ctx.policy.guardrailsChanged(organizationId);
    }
  };

  app.get(
    "/organization/members",
    {
      config,
      schema: {
        tags: ["Organization"],
        operationId: "listOrganizationMembers",
        querystring: MembersQuery,
        response: { 200: MemberListResponse },
      },
    },
    async (request) => listMembers(store, org(request), request.query.offset ?? 0, request.query.limit ?? 50),
  );

  app.post(
    "/organization/members",
    {
      config,
      schema: {
        tags: ["Organization"],
        operationId: "createOrganizationMember",
        description: `${EXTENSION}Adds a person to the organization; a duplicate email is 409.`,
        body: CreateMemberBody,
        response: { 201: MemberResponse },
      },
    },
    async (request, reply) => {
      const o = org(request);
      const data = await changing(o, () => createMember(store, clock, o, request.body));
      return reply.status(201).send({ data });
    },
  );

  app.patch(
    "/organization/members/:id",
    {
      config,
      schema: {
        tags: ["Organization"],
        operationId: "updateOrganizationMember",
        description: `${EXTENSION}Changes a member's names or role (the role in every workspace follows).`,
        params: MemberParams,
        body: UpdateMemberBody,
        response: { 200: MemberResponse },
      },
    },
    async (request) => {
      const o = org(request);
      return {
        data: await changing(o, () => updateMember(store, clock, o, request.params.id, request.body)),
      };
    },
  );

  app.delete(
    "/organization/members/:id",
    {
      config,
      schema: {
        tags: ["Organization"],
        operationId: "deleteOrganizationMember",
        description: `${EXTENSION}Removes a member, its workspace memberships and its guardrail assignment; refused (400) while the member has active keys.`,
        params: MemberParams,
        response: { 200: DeletedResponse },
      },
    },
    async (request) => {
      const o = org(request);
      await changing(o, () => deleteMember(store, clock, o, request.params.id));
      return { deleted: true as const };
    },
  );

  const tags = ["Workspaces"];
  app.get(
    "/workspaces/:id/members",
    {
      config,
      schema: {
        tags,
        operationId: "listWorkspaceMembers",
        params: WorkspaceRefParams,
        querystring: MembersQuery,
        response: { 200: WorkspaceMemberListResponse },
      },
    },
    async (request) =>
      listWorkspaceMembers(
        store,
        org(request),
        request.params.id,
        request.query.offset ?? 0,
        request.query.limit ?? 50,
      ),
  );

  app.post(
    "/workspaces/:id/members/add",
    {
      config,
      schema: {
        tags,
        operationId: "bulkAddWorkspaceMembers",
        params: WorkspaceRefParams,
        body: UserIdsBody,
        response: { 200: AddedMembersResponse },
      },
    },
    async (request) =>
      addWorkspaceMembers(store, clock, org(request), request.params.id, request.body.user_ids),
  );

  app.post(
    "/workspaces/:id/members/remove",
    {
      config,
      schema: {
        tags,
        operationId: "bulkRemoveWorkspaceMembers",
        params: WorkspaceRefParams,
        body: UserIdsBody,
        response: { 200: RemovedMembersResponse },
      },
    },
    async (request) =>
      removeWorkspaceMembers(store, clock, org(request), request.params.id, request.body.user_ids),
  );
}
