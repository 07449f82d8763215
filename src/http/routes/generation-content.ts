import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { getGenerationContent } from "../../gateway/content-log/generation-content-lookup.js";
import type { FeedbackActivity } from "../../domain/generation-feedback/feedback-activity.js";
import { submitFeedback } from "../../gateway/generation-feedback/submit-feedback.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { GenerationQuery } from "../schemas/gateway.js";
import { GenerationFeedbackBody, GenerationFeedbackResponse } from "../schemas/generation-feedback.js";

const DAY_MS = 86_400_000;

/** GET /generation/content and POST /generation/feedback (docs/content-logging.md). */
export async function generationContentRoutes(
  root: FastifyInstance,
  ctx: AppContext,
  feedbackActivity: FeedbackActivity,
): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Models and generations"];
  const rateLimit = routeLimit(ctx.config.rateLimit.management);
  const retentionMs = ctx.config.contentRetentionDays * DAY_MS;
  app.get(
    "/generation/content",
    {
      // As GET /generation: the key that made it, or a management key of its organization.
      config: { auth: "any", rateLimit },
      schema: { tags, operationId: "listGenerationContent", querystring: GenerationQuery },
    },
    async (request) => ({
      data: await getGenerationContent(
        ctx.store.db,
        ctx.secretBox,
        principal(request),
        request.query.id,
        ctx.clock.now(),
        retentionMs,
      ),
    }),
  );
  app.post(
    "/generation/feedback",
    {
      config: { auth: "management", rateLimit },
      schema: {
        tags,
        operationId: "submitGenerationFeedback",
        body: GenerationFeedbackBody,
        response: { 200: GenerationFeedbackResponse },
      },
    },
    async (request) => {
      await submitFeedback(
        { store: ctx.store, feedbackActivity },
        principal(request),
        request.body,
        ctx.clock.now(),
      );
      return { data: { success: true as const } };
    },
  );
}
