import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { ChatBody } from "../../gateway/chat/serve.js";
import type { AppContext } from "../context.js";
import { ChatRequestBody } from "../schemas/chat.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { MODEL_BODY_LIMIT, type ModelRequests } from "./model-requests.js";

/** POST /chat/completions: thin; the data plane is src/gateway/chat/. */
export function chatRoutes(root: FastifyInstance, ctx: AppContext, requests: ModelRequests): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    "/chat/completions",
    {
      // Inference has its own per-key class (RATE_LIMIT_INFERENCE_*, docs/configuration.md).
      config: { auth: "inference", rateLimit: routeLimit(ctx.config.rateLimit.inference) },
      bodyLimit: MODEL_BODY_LIMIT,
      schema: {
        tags: ["Chat"],
        operationId: "sendChatCompletionRequest",
        description:
          "OpenAI-compatible chat completion, streamed (SSE) or not, with model fallbacks and provider preferences. Reserves the worst-case cost against the key's limit and the workspace's budgets first (docs/gateway.md).",
        body: ChatRequestBody,
      },
    },
    (request, reply) => {
      const body = request.body as ChatBody;
      return requests.serve(request, reply, { api: "chat", body, stream: body.stream === true });
    },
  );
}
