import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { organizationCredits } from "../../domain/organizations/organization-credits.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { CreditsResponse } from "../schemas/credits.js";

/** GET /credits (management keys): the organization's credit line and lifetime usage. */
export async function creditsRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    "/credits",
    {
      config: { auth: "management", rateLimit: routeLimit(ctx.config.rateLimit.management) },
      schema: { tags: ["Credits"], operationId: "getCredits", response: { 200: CreditsResponse } },
    },
    async (request) => ({ data: await organizationCredits(ctx.store.db, principal(request).organizationId) }),
  );
}
