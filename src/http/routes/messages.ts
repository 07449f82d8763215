import type { FastifyInstance } from "fastify";
import { countMessageTokens, messagesRequest } from "../../gateway/surfaces/messages/messages-surface.js";
import type { AppContext } from "../context.js";
import { AnyObjectBody } from "../schemas/common.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { MODEL_BODY_LIMIT, type ModelRequests } from "./model-requests.js";

/**
 * The Anthropic Messages API (docs/gateway.md "Anthropic Messages"): `@anthropic-ai/sdk` and Claude
 * Code pointed at `http://HOST:PORT/api` post to /api/v1/messages (Claude Code adds `?beta=true`),
 * with the key as `Authorization: Bearer` or `x-api-key`. Errors come in Anthropic's envelope.
 */
export function messagesRoutes(app: FastifyInstance, ctx: AppContext, requests: ModelRequests): void {
  const config = {
    auth: "inference" as const,
    errorShape: "anthropic" as const,
    rateLimit: routeLimit(ctx.config.rateLimit.inference),
  };
  app.post(
    "/messages",
    {
      config,
      bodyLimit: MODEL_BODY_LIMIT,
      schema: {
        tags: ["Messages"],
        operationId: "createMessage",
        description:
          "Anthropic Messages API, streamed (named SSE events) or not, on any provider: native to an anthropic provider, translated for the others. Reserved, charged and recorded as chat completions are (docs/gateway.md).",
        body: AnyObjectBody,
      },
    },
    (request, reply) => {
      const beta = request.headers["anthropic-beta"];
      const m = messagesRequest(request.body, typeof beta === "string" ? beta : undefined);
      return requests.serve(request, reply, { api: "messages", ...m });
    },
  );
  app.post(
    "/messages/count_tokens",
    {
      config,
      bodyLimit: MODEL_BODY_LIMIT,
      schema: {
        tags: ["Messages"],
        operationId: "countMessageTokens",
        description:
          "The prompt's input tokens as Gatehouse estimates them for a Messages request (the estimate its reservations use); nothing is forwarded or charged.",
        body: AnyObjectBody,
      },
    },
    async (request) => countMessageTokens(request.body),
  );
}
