import type { FastifyInstance } from "fastify";
import type { AppContext } from "../context.js";
import { analyticsRoutes } from "./analytics.js";
import { broadcastRoutes } from "./broadcast.js";
import { chatRoutes } from "./chat.js";
import { embeddingsRoutes } from "./embeddings.js";
import { messagesRoutes } from "./messages.js";
import { responsesRoutes } from "./responses.js";
import { ModelRequests } from "./model-requests.js";
import { byokRoutes } from "./byok.js";
import { gatewayReadRoutes } from "./gateway-reads.js";
import { generationContentRoutes } from "./generation-content.js";
import { guardrailsRoutes } from "./guardrails.js";
import type { Gateway } from "../../gateway/gateway.js";
import type { FeedbackActivity } from "../../domain/generation-feedback/feedback-activity.js";
import { budgetsRoutes } from "./budgets.js";
import { creditsRoutes } from "./credits.js";
import { destinationsRoutes } from "./destinations.js";
import { ingestRoutes } from "./ingest.js";
import { keysRoutes } from "./keys.js";
import { membersRoutes } from "./members.js";
import { workspacesRoutes } from "./workspaces.js";

/** Every route under /api/v1. Each resource registers itself from its own module. */
export async function apiRoutes(
  app: FastifyInstance,
  ctx: AppContext & { gateway: Gateway; feedbackActivity: FeedbackActivity },
): Promise<void> {
  app.get("/openapi.json", { config: { auth: "none" }, schema: { hide: true } }, async () => app.swagger());
  await keysRoutes(app, ctx);
  await workspacesRoutes(app, ctx);
  await membersRoutes(app, ctx);
  await budgetsRoutes(app, ctx);
  await creditsRoutes(app, ctx);
  await destinationsRoutes(app, ctx);
  await broadcastRoutes(app, ctx);
  await ingestRoutes(app, ctx);
  await analyticsRoutes(app, ctx);
  // Every API surface serves model requests through one handler (slots, cancellation, shutdown).
  const requests = new ModelRequests(app, ctx, ctx.gateway);
  chatRoutes(app, ctx, requests);
  messagesRoutes(app, ctx, requests);
  responsesRoutes(app, ctx, requests);
  embeddingsRoutes(app, ctx, ctx.gateway, requests);
  await gatewayReadRoutes(app, ctx, ctx.gateway);
  await generationContentRoutes(app, ctx, ctx.feedbackActivity);
  await byokRoutes(app, ctx, ctx.gateway);
  await guardrailsRoutes(app, ctx, ctx.gateway);
}
