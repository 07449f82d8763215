import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { deleteBudget, getBudget, listBudgets, putBudget } from "../../domain/budgets/budget-service.js";
import { changingWorkspace } from "../../domain/policy/changing.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import {
  BudgetListResponse,
  BudgetParams,
  BudgetResponse,
  PutBudgetBody,
  WorkspaceRefOnlyParams,
} from "../schemas/budgets.js";
import { DeletedResponse } from "../schemas/common.js";

/** Workspace budgets, one per interval: put (create or replace), read, list, delete. */
export async function budgetsRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: "management" as const, rateLimit: routeLimit(ctx.config.rateLimit.management) };
  const tags = ["Workspace budgets"];
  const one = "/workspaces/:workspace_ref/budgets/:interval";

  app.put(
    one,
    {
      config,
      schema: {
        tags,
        operationId: "upsertWorkspaceBudget",
        params: BudgetParams,
        body: PutBudgetBody,
        response: { 200: BudgetResponse },
      },
    },
    async (request) => {
      const org = principal(request).organizationId;
      const { workspace_ref: ref, interval } = request.params;
      return changingWorkspace(ctx.policy, org, ref, () =>
        putBudget(ctx.store, ctx.clock, org, ref, interval, request.body),
      );
    },
  );

  app.get(
    one,
    {
      config,
      schema: {
        tags,
        operationId: "getWorkspaceBudget",
        params: BudgetParams,
        response: { 200: BudgetResponse },
      },
    },
    async (request) =>
      getBudget(
        ctx.store,
        ctx.policy,
        ctx.clock,
        principal(request).organizationId,
        request.params.workspace_ref,
        request.params.interval,
      ),
  );

  app.delete(
    one,
    {
      config,
      schema: {
        tags,
        operationId: "deleteWorkspaceBudget",
        params: BudgetParams,
        response: { 200: DeletedResponse },
      },
    },
    async (request) => {
      const org = principal(request).organizationId;
      const { workspace_ref: ref, interval } = request.params;
      await changingWorkspace(ctx.policy, org, ref, () => deleteBudget(ctx.store, org, ref, interval));
      return { deleted: true as const };
    },
  );

  app.get(
    "/workspaces/:workspace_ref/budgets",
    {
      config,
      schema: {
        tags,
        operationId: "listWorkspaceBudgets",
        params: WorkspaceRefOnlyParams,
        response: { 200: BudgetListResponse },
      },
    },
    async (request) =>
      listBudgets(
        ctx.store,
        ctx.policy,
        ctx.clock,
        principal(request).organizationId,
        request.params.workspace_ref,
      ),
  );
}
