import { firstStarted } from "../chat/fallbacks.js";
import { ChatRun, upstreamFailure, type ChatCall } from "../chat/serve.js";
import type { Gateway } from "../gateway.js";
import { UpstreamError, type ProviderEmbedding } from "../providers/provider.js";
import type { EmbeddingsRequest } from "../surfaces/embeddings/embeddings-request.js";
import {
  embeddingsResponse,
  embeddingsUsage,
  type EmbeddingsResponseWire,
} from "../surfaces/embeddings/embeddings-response.js";

/**
 * Embeddings through the one data plane: the same auth, fair use, reservation (the input's
 * estimated tokens at the prompt price; nothing is generated), fallbacks over the model's
 * providers, settlement and recording as a chat answer (ChatRun, firstStarted), with `api`
 * "embeddings" and no completion. The input texts are the generation's prompt for Broadcast (a
 * user message each). `call.body` is the chat request the plane reads: the model, the provider
 * preferences, those messages.
 */
export async function embed(
  gw: Gateway,
  call: ChatCall,
  req: EmbeddingsRequest,
): Promise<{ headers: Record<string, string>; body: EmbeddingsResponseWire }> {
  const run = await new ChatRun(gw, call).withByok();
  const s = await firstStarted(
    run,
    () => call.clientGone.aborted,
    false,
    (a): Promise<ProviderEmbedding> => {
      const adapter = a.provider.adapter;
      if (!adapter.embed) {
        // The providers file refuses an embedding model on a provider without embeddings.
        return Promise.reject(new UpstreamError(`${a.provider.slug} has no embeddings API`, null, true));
      }
      return adapter.embed(
        {
          upstreamModel: a.endpoint.upstreamModel,
          input: req.input,
          ...(req.dimensions !== null ? { dimensions: req.dimensions } : {}),
          ...(req.inputType !== null ? { inputType: req.inputType } : {}),
          ...(req.user !== null ? { user: req.user } : {}),
          timeoutMs: run.upstreamCall(a, { messages: [] }).timeoutMs,
          ...(a.byok ? { apiKey: a.byok.secret } : {}),
        },
        call.upstreamStop,
      );
    },
  );
  if ("stoppedAfter" in s) throw upstreamFailure(s.stoppedAfter);
  const { a, hold, started: res } = s;
  const elapsed = performance.now() - s.t0;
  try {
    const usage = {
      promptTokens: res.usage?.promptTokens ?? run.promptEstimate,
      completionTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    };
    const charge = run.chargeOf(a, usage);
    await run.settle(hold, a, charge, {
      finishReason: "stop",
      streamed: false,
      cancelled: call.clientGone.aborted,
      upstreamId: res.upstreamId,
      latencyMs: elapsed,
      generationTimeMs: elapsed,
      output: null,
    });
    return {
      headers: { "x-gatehouse-overhead-ms": run.overheadMs.toFixed(3), "x-gatehouse-generation-id": run.id },
      body: embeddingsResponse(res.vectors, {
        model: a.model.id,
        id: run.id,
        encoding: req.encoding,
        usage: embeddingsUsage(
          { promptTokens: usage.promptTokens, ...charge },
          a.endpoint.promptPricePerMTokNano,
        ),
      }),
    };
  } catch (err) {
    await hold.release();
    throw err;
  }
}
