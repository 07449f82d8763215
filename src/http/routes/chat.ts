import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { completeChat } from "../../gateway/chat/complete.js";
import type { ChatBody } from "../../gateway/chat/serve.js";
import { streamChat } from "../../gateway/chat/stream.js";
import type { Gateway } from "../../gateway/gateway.js";
import type { KeyPolicy } from "../../domain/policy/policy.js";
import type { AppContext } from "../context.js";
import { ChatRequestBody } from "../schemas/chat.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { sseResponse } from "./sse-response.js";
import { Cancellation } from "../../gateway/cancellation.js";
import type { RequestSlots } from "../../gateway/fair-use/in-flight-limits.js";

/**
 * A chat request's body at most: images travel inside it as base64 data URLs (a 3 MB photo is
 * 4 MB of text), so the management routes' 1 MiB refused ordinary vision requests. The prompt
 * estimate counts an image part as a fixed number of tokens whatever its size (count-tokens.ts).
 */
export const CHAT_BODY_LIMIT = 32 * 1024 * 1024;

const header = (v: string | string[] | undefined): string | null =>
  typeof v === "string" && v.length > 0 ? v.slice(0, 1024) : null;

/** POST /chat/completions: thin; the data plane is src/gateway/chat/. */
export async function chatRoutes(root: FastifyInstance, ctx: AppContext, gw: Gateway): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  // A shutdown waits for the requests in flight, then cancels what outlives the grace period.
  const inFlight = gw.inFlight;
  root.addHook("preClose", async () => {
    if (inFlight.size === 0) return;
    const graceMs = ctx.config.gateway.shutdownGraceMs;
    root.log.info({ requests: inFlight.size, grace_ms: graceMs }, "waiting for model requests in flight");
    const { cancelled } = await inFlight.drain(graceMs);
    if (cancelled > 0) root.log.warn({ cancelled }, "model requests cancelled at shutdown (usage recorded)");
  });
  app.post(
    "/chat/completions",
    {
      // Inference has its own per-key class (RATE_LIMIT_INFERENCE_*, docs/configuration.md).
      config: { auth: "inference", rateLimit: routeLimit(ctx.config.rateLimit.inference) },
      bodyLimit: CHAT_BODY_LIMIT,
      schema: {
        tags: ["Chat"],
        operationId: "sendChatCompletionRequest",
        description:
          "OpenAI-compatible chat completion, streamed (SSE) or not, with model fallbacks and provider preferences. Reserves the worst-case cost against the key's limit and the workspace's budgets first (docs/gateway.md).",
        body: ChatRequestBody,
      },
    },
    async (request, reply) => {
      const key = request.inferenceKey as KeyPolicy;
      // Refused 429 here, before anything is reserved or forwarded, when the key has its maximum
      // of requests in flight; given back in `finally`, however the request ends.
      const slots = gw.limits.admit(key.hash, key.workspaceId);
      const gone = new Cancellation();
      const stop = new Cancellation();
      // A stream stops when its client goes: what was generated is charged. A whole answer once
      // asked for is generated, charged and recorded even so (the provider bills it; nothing
      // else tells what it cost), and only a shutdown's grace running out cancels it.
      const streamed = (request.body as ChatBody).stream === true;
      reply.raw.on("close", () => {
        if (reply.raw.writableFinished) return;
        gone.abort();
        if (streamed) stop.abort();
      });
      const untrack = inFlight.track(stop);
      try {
        return await serve(request, reply, gone, stop, slots);
      } finally {
        untrack();
        slots.release();
      }
    },
  );

  async function serve(
    request: FastifyRequest,
    reply: FastifyReply,
    gone: Cancellation,
    stop: Cancellation,
    slots: RequestSlots,
  ): Promise<unknown> {
    const call = {
      key: request.inferenceKey as KeyPolicy,
      body: request.body as ChatBody,
      referer: header(request.headers["http-referer"]) ?? header(request.headers.referer),
      appTitle: header(request.headers["x-openrouter-title"]) ?? header(request.headers["x-title"]),
      arrivedNs: request.arrivedNs,
      clientGone: gone,
      upstreamStop: stop,
      slots,
    };
    if (call.body.stream === true) {
      let opened = false;
      const res = reply.raw;
      await streamChat(
        gw,
        call,
        sseResponse(res, (headers) => {
          opened = true;
          void reply.hijack();
          res.writeHead(200, {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            connection: "keep-alive",
            "x-request-id": String(request.id),
            ...headers,
          });
        }),
      );
      if (!opened) {
        // The client left (or the server is shutting down) before any answer: nothing to send.
        void reply.hijack();
        res.destroy();
      }
      return reply;
    }
    const answer = await completeChat(gw, call);
    void reply.headers(answer.headers);
    return answer.body;
  }
}
