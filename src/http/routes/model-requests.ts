import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { completeChat, type Answer } from "../../gateway/chat/complete.js";
import type { ChatBody, ChatCall } from "../../gateway/chat/serve.js";
import { streamChat } from "../../gateway/chat/stream.js";
import type { StreamEncoderFor } from "../../gateway/chat/stream-encoder.js";
import type { Gateway } from "../../gateway/gateway.js";
import type { KeyPolicy } from "../../domain/policy/policy.js";
import { Cancellation } from "../../gateway/cancellation.js";
import type { RequestSlots } from "../../gateway/fair-use/in-flight-limits.js";
import type { Api } from "../../gateway/surfaces/api.js";
import type { NativeRequest } from "../../gateway/providers/provider.js";
import type { AppContext } from "../context.js";
import { sseResponse } from "./sse-response.js";
import { applyGuardrails } from "../../gateway/guardrails/apply-guardrails.js";
import { DomainError } from "../../domain/errors.js";

/**
 * A model request's body at most, on every API surface: images travel inside it as base64 data
 * URLs (a 3 MB photo is 4 MB of text), so the management routes' 1 MiB refused ordinary vision
 * requests. The prompt estimate counts an image part as a fixed number of tokens whatever its size
 * (count-tokens.ts).
 */
export const MODEL_BODY_LIMIT = 32 * 1024 * 1024;

/** What an API surface's route hands the data plane, translated from its own request shape. */
export interface SurfaceRequest {
  api: Api;
  /** The chat request the data plane runs. */
  body: ChatBody;
  /** Whether the client asked for a stream (in the surface's own field). */
  stream: boolean;
  /** How the surface writes an open stream (default: chat completions chunks). */
  encoderFor?: StreamEncoderFor;
  /** The surface's whole answer, from the data plane's chat completion (default: that as is). */
  answer?: (chat: Answer) => Answer;
  /**
   * Headers of an answer served through the translation to the chat shape (what it left out);
   * an answer from a provider that took `native` as sent does not carry them.
   */
  headers?: Record<string, string>;
  /** The request in a provider's own API (forwarded as sent to a provider of that kind). */
  native?: NativeRequest;
  /** How a whole answer is made (default: a chat completion; embeddings have their own). */
  complete?: (gw: Gateway, call: ChatCall) => Promise<Answer>;
  /** Part of the prompt is not text (embeddings' token ids): content filters cannot read it. */
  opaquePrompt?: boolean;
}

const header = (v: string | string[] | undefined): string | null =>
  typeof v === "string" && v.length > 0 ? v.slice(0, 1024) : null;

/**
 * Serves model requests for every API surface the same way: the key's in-flight slot (429 when it
 * has its maximum), cancellation (a stream stops when its client goes: what was generated is
 * charged; a whole answer once asked for is generated, charged and recorded even so, and only a
 * shutdown's grace running out cancels it), the shutdown's wait for requests in flight, and the
 * HTTP response for a stream or a whole answer. Registered once per server (its preClose hook).
 */
export class ModelRequests {
  constructor(
    root: FastifyInstance,
    private readonly ctx: AppContext,
    private readonly gw: Gateway,
  ) {
    // A shutdown waits for the requests in flight, then cancels what outlives the grace period.
    const inFlight = gw.inFlight;
    root.addHook("preClose", async () => {
      if (inFlight.size === 0) return;
      const graceMs = ctx.config.gateway.shutdownGraceMs;
      root.log.info({ requests: inFlight.size, grace_ms: graceMs }, "waiting for model requests in flight");
      const { cancelled } = await inFlight.drain(graceMs);
      if (cancelled > 0)
        root.log.warn({ cancelled }, "model requests cancelled at shutdown (usage recorded)");
    });
  }

  async serve(request: FastifyRequest, reply: FastifyReply, surface: SurfaceRequest): Promise<unknown> {
    try {
      return await this.admitted(request, reply, surface);
    } catch (err) {
      // A guardrail's refusal (a content filter's block, no endpoint allowed): counted. Budget
      // refusals are counted where the hold is refused (ChatRun.refused).
      if (err instanceof DomainError && err.status === 403 && err.metadata?.rule !== undefined) {
        if (err.metadata.scope !== "guardrail") this.gw.observer?.refused?.("guardrail");
      }
      throw err;
    }
  }

  private async admitted(
    request: FastifyRequest,
    reply: FastifyReply,
    surface: SurfaceRequest,
  ): Promise<unknown> {
    const key = request.inferenceKey as KeyPolicy;
    // Refused 429 here, before anything is reserved or forwarded, when the key has its maximum
    // of requests in flight; given back in `finally`, however the request ends.
    const slots = this.gw.limits.admit(key.hash, key.workspaceId);
    const gone = new Cancellation();
    const stop = new Cancellation();
    reply.raw.on("close", () => {
      if (reply.raw.writableFinished) return;
      gone.abort();
      if (surface.stream) stop.abort();
    });
    const untrack = this.gw.inFlight.track(stop);
    try {
      return await this.run(request, reply, surface, { gone, stop, slots });
    } finally {
      untrack();
      slots.release();
    }
  }

  private async run(
    request: FastifyRequest,
    reply: FastifyReply,
    surface: SurfaceRequest,
    s: { gone: Cancellation; stop: Cancellation; slots: RequestSlots },
  ): Promise<unknown> {
    const key = request.inferenceKey as KeyPolicy;
    // Guardrails first: before anything is reserved or forwarded (a block is the 403), the
    // request's text redacted where a filter says so.
    const guarded = await applyGuardrails(this.gw.policy, key, {
      api: surface.api,
      body: surface.body,
      ...(surface.native ? { native: surface.native } : {}),
      ...(surface.opaquePrompt ? { opaquePrompt: true } : {}),
    });
    const call: ChatCall = {
      key,
      body: guarded.body,
      api: surface.api,
      ...(guarded.native ? { native: guarded.native } : {}),
      ...(surface.headers ? { translatedHeaders: surface.headers } : {}),
      ...(guarded.guardrails ? { guardrails: guarded.guardrails } : {}),
      referer: header(request.headers["http-referer"]) ?? header(request.headers.referer),
      appTitle: header(request.headers["x-openrouter-title"]) ?? header(request.headers["x-title"]),
      arrivedNs: request.arrivedNs,
      clientGone: s.gone,
      upstreamStop: s.stop,
      slots: s.slots,
    };
    if (surface.stream) {
      let opened = false;
      const res = reply.raw;
      await streamChat(
        this.gw,
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
        surface.encoderFor,
      );
      if (!opened) {
        // The client left (or the server is shutting down) before any answer: nothing to send.
        void reply.hijack();
        res.destroy();
      }
      return reply;
    }
    const chat = await (surface.complete ?? completeChat)(this.gw, call);
    const answer = surface.answer ? surface.answer(chat) : chat;
    void reply.headers(answer.headers);
    return answer.body;
  }
}
