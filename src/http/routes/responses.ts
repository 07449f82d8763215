import type { FastifyInstance } from "fastify";
import { responsesRequest } from "../../gateway/surfaces/responses/responses-surface.js";
import type { AppContext } from "../context.js";
import { AnyObjectBody } from "../schemas/common.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { MODEL_BODY_LIMIT, type ModelRequests } from "./model-requests.js";

/**
 * The OpenAI Responses API, stateless (docs/gateway.md "Responses"): the official SDK's
 * `responses.send`, the `openai` package's `responses.create` / `responses.stream()`, Codex CLI.
 * Streaming is decided by the body's `stream` (the `openai` package sends `Accept:
 * application/json` even when streaming).
 */
export function responsesRoutes(app: FastifyInstance, ctx: AppContext, requests: ModelRequests): void {
  app.post(
    "/responses",
    {
      config: { auth: "inference", rateLimit: routeLimit(ctx.config.rateLimit.inference) },
      bodyLimit: MODEL_BODY_LIMIT,
      schema: {
        tags: ["Responses"],
        operationId: "createResponses",
        description:
          "OpenAI Responses API (stateless: store true or previous_response_id is a 400), streamed (full event sequence) or not, on any provider: native to an openai-compatible provider declaring responses: true, translated for the others. Reserved, charged and recorded as chat completions are (docs/gateway.md).",
        body: AnyObjectBody,
      },
    },
    (request, reply) => {
      return requests.serve(request, reply, { api: "responses", ...responsesRequest(request.body) });
    },
  );
}
