import { Type } from "typebox";
import type { FastifyInstance } from "fastify";
import type { ChatBody } from "../../gateway/chat/serve.js";
import { embed } from "../../gateway/embeddings/embed.js";
import { listEmbeddingModels } from "../../gateway/catalog/catalog-views.js";
import type { Gateway } from "../../gateway/gateway.js";
import { embeddingsRequest } from "../../gateway/surfaces/embeddings/embeddings-request.js";
import type { AppContext } from "../context.js";
import { AnyObjectBody, MAX_OFFSET } from "../schemas/common.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { MODEL_BODY_LIMIT, type ModelRequests } from "./model-requests.js";

const Page = Type.Object({
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OFFSET })),
  // At most 500 (the SDK's page size): a larger limit is a 400 naming it (catalog-views.ts).
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_OFFSET })),
});

/**
 * POST /embeddings (official SDK `embeddings.generate`, `openai` package `embeddings.create`) and
 * GET /embeddings/models (docs/gateway.md "Embeddings"). An embedding model is one the providers
 * file marks `"kind": "embedding"`.
 */
export function embeddingsRoutes(
  app: FastifyInstance,
  ctx: AppContext,
  gw: Gateway,
  requests: ModelRequests,
): void {
  app.post(
    "/embeddings",
    {
      config: { auth: "inference", rateLimit: routeLimit(ctx.config.rateLimit.inference) },
      bodyLimit: MODEL_BODY_LIMIT,
      schema: {
        tags: ["Embeddings"],
        operationId: "createEmbeddings",
        description:
          "Embeddings of one or more inputs (texts or token ids), as numbers or base64 of little-endian float32. Reserved, charged and recorded like chat completions (prompt tokens at the model's prompt price).",
        body: AnyObjectBody,
      },
    },
    (request, reply) => {
      const req = embeddingsRequest(request.body);
      // What the data plane reads: the model, the provider preferences, and the inputs as the
      // prompt (its estimate reserves; Broadcast sees the texts).
      const body: ChatBody = {
        model: req.model,
        messages: req.input.map((x) => ({ role: "user", content: typeof x === "string" ? x : x.join(" ") })),
        ...(req.provider ? { provider: req.provider } : {}),
        ...(req.user !== null ? { user: req.user } : {}),
        ...(req.sessionId !== null ? { session_id: req.sessionId } : {}),
      };
      return requests.serve(request, reply, {
        api: "embeddings",
        body,
        stream: false,
        // Token ids are not text a content filter can read (docs/guardrails.md).
        opaquePrompt: req.input.some((x) => typeof x !== "string"),
        complete: async (g, call) => {
          // The texts as the data plane has them (redacted by a guardrail where one says so): one
          // user message per input item, in order.
          const texts = req.input as readonly (string | readonly number[])[];
          const input = texts.every((x) => typeof x === "string")
            ? texts.map((x, i) => {
                const m = call.body.messages[i] as { content?: unknown } | undefined;
                return typeof m?.content === "string" ? m.content : x;
              })
            : req.input;
          const { headers, body: answer } = await embed(g, call, { ...req, input });
          return { headers, body: { ...answer } };
        },
      });
    },
  );
  app.get(
    "/embeddings/models",
    {
      config: { auth: "none", rateLimit: routeLimit(ctx.config.rateLimit.management) },
      schema: { tags: ["Embeddings"], operationId: "listEmbeddingsModels", querystring: Page },
    },
    async (request) => listEmbeddingModels(gw.catalog, request.query as { offset?: number; limit?: number }),
  );
}
