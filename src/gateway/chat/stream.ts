import type { CancelSignal } from "../cancellation.js";
import type { Gateway } from "../gateway.js";
import {
  UpstreamError,
  UpstreamTimeout,
  type ProviderChunk,
  type ProviderUsage,
} from "../providers/provider.js";
import type { HoldHandle } from "../reservations/hold.js";
import type { Attempt } from "./attempts.js";
import { GeneratedOutput } from "./generated.js";
import { ChatRun, withoutReasoning, type ChatCall } from "./serve.js";
import { firstStarted } from "./fallbacks.js";
import { chatStream, type StreamEncoder, type StreamEncoderFor } from "./stream-encoder.js";
import { usageWire } from "./wire.js";

/** Where a stream goes: the HTTP response, opened on the first upstream byte. */
export interface SseSink {
  start(headers: Record<string, string>): void;
  write(text: string): void;
  /**
   * The end is being recorded: what is pending may wait for the end of the turn's I/O to leave
   * with the final events (not longer).
   */
  settling(): void;
  /** Ends the response, after `last` when given (one socket write for both). */
  end(last?: string): void;
  /**
   * Null while the client takes what is written; while its connection's buffer is full (a client
   * reading slower than the upstream writes), a promise that resolves once it drains, closes, or
   * `stop` fires. The next upstream chunk is read only then, so a slow client slows the upstream
   * (TCP's own backpressure) instead of the answer piling up in memory.
   */
  ready(stop: CancelSignal): Promise<void> | null;
}

/**
 * A streamed chat completion. Before the first upstream chunk, a retryable failure finishes the
 * attempt's hold and tries the next attempt (nothing has reached the client); the HTTP error
 * answer is thrown when all fail. A client that leaves then, or a timeout, after the request
 * reached the provider charges the attempt its prompt (ChatRun.attemptFailed); any other failure
 * before the first chunk releases the hold. From the first chunk on, the response is open: chunks are
 * forwarded as they arrive; an upstream failure ends the stream with an in-band error chunk; a
 * client that goes away cancels the upstream. Every such end records what was generated and
 * settles the hold, once.
 */
export async function streamChat(
  gw: Gateway,
  call: ChatCall,
  sink: SseSink,
  encoderFor: StreamEncoderFor = chatStream,
): Promise<void> {
  const run = await new ChatRun(gw, call).withByok();
  // The adapter enforces the provider's first-byte deadline (UpstreamTimeout), and stops when the
  // client goes (or a shutdown's grace runs out: the same signal).
  const s = await firstStarted(
    run,
    () => call.upstreamStop.aborted,
    true,
    async (a, body) => {
      body.stream = true;
      const chunks = a.provider.adapter.stream(run.upstreamCall(a, body), call.upstreamStop);
      const it = chunks[Symbol.asyncIterator]();
      return { it, first: await it.next() };
    },
  );
  if ("stoppedAfter" in s) return;
  const encoder = encoderFor({
    id: run.id,
    created: run.created,
    model: s.a.model.id,
    provider: s.a.provider.name,
  });
  await forward(run, s.a, s.hold, s.started.it, s.started.first, s.t0, sink, encoder);
}

/** The open stream: forward, then record and settle on whichever way it ends. */
async function forward(
  run: ChatRun,
  a: Attempt,
  hold: HoldHandle,
  it: AsyncIterator<ProviderChunk>,
  first: IteratorResult<ProviderChunk>,
  t0: number,
  sink: SseSink,
  encoder: StreamEncoder,
): Promise<void> {
  // The client leaving, or a shutdown's grace running out (ChatCall.upstreamStop).
  const stop = run.call.upstreamStop;
  const latencyMs = performance.now() - t0;
  sink.start(run.answerHeaders(a));
  const opening = encoder.open();
  if (opening !== "") sink.write(opening);
  // What was generated, gathered for the counted fallback (counted once, at the end).
  const output = new GeneratedOutput();
  let usage: ProviderUsage | null = null;
  // Generated text arrived in a chunk after the last usage, without one of its own: that usage
  // cannot have counted it.
  let outputAfterUsage = false;
  let prompt: ProviderChunk["prompt"] | null = null;
  let finishReason: string | null = null;
  let upstreamId: string | null = null;
  let failure: UpstreamError | null = null;
  let cancelled = false;
  let next = first;
  try {
    while (!next.done) {
      const c = next.value;
      upstreamId ??= c.upstreamId;
      if (c.usage) {
        usage = c.usage;
        outputAfterUsage = false;
      }
      if (c.prompt) prompt = c.prompt;
      let visible = c.choices.length > 0;
      for (const ch of c.choices) {
        output.addDelta(ch.index, ch.delta);
        if (usage && !c.usage && carriesOutput(ch.delta)) outputAfterUsage = true;
        if (ch.finish_reason !== null) finishReason = ch.finish_reason;
      }
      if (run.hideReasoning && visible) {
        // Reasoning is counted above and charged; a chunk that carried only reasoning is not sent.
        for (const ch of c.choices) ch.delta = withoutReasoning(ch.delta);
        visible = c.choices.some((ch) => ch.finish_reason !== null || Object.keys(ch.delta).length > 0);
      }
      if (visible && !stop.aborted) {
        const text = encoder.chunk(c);
        if (text !== "") sink.write(text);
      }
      if (stop.aborted) break;
      const drained = sink.ready(stop);
      if (drained) await drained;
      if (stop.aborted) break;
      next = await it.next();
    }
  } catch (err) {
    if (stop.aborted) cancelled = true;
    else
      failure = err instanceof UpstreamError ? err : new UpstreamError("upstream stream failed", null, false);
  }
  if (stop.aborted) {
    cancelled = true; // the adapter saw the same signal: its upstream call is aborted
    void it.return?.().catch(() => undefined);
  }
  // Stopped with its client still there: a shutdown's grace ran out. The client is told in band
  // (an error chunk, then [DONE]) rather than left with a stream that just ends, which the SDK
  // takes for a whole answer.
  const shutDown = cancelled && !run.call.clientGone.aborted;
  // A stream cut short bills what was generated too: counted when the upstream sent no usage, and
  // at least that count when it sent one before it broke off (atLeastGenerated). So does a stream
  // that reached its end with text after its last usage (a usage sent early, and none at the end).
  // A stream whose last usage came after all of its text is charged that usage as reported. The
  // count is made only in those cases, here, once.
  const maxCompletion = hold.plan.maxTokens;
  if (usage && (!next.done || outputAfterUsage)) usage = atLeastGenerated(usage, output, maxCompletion);
  const charge = run.chargeOf(a, run.usageOf(usage, output, maxCompletion, prompt));
  const usageWireObj = usageWire(charge);
  if (failure) {
    finishReason = "error";
    sink.write(
      // A stall past the provider's idle_timeout_ms is a timeout (524), anything else 502.
      encoder.fail(
        failure instanceof UpstreamTimeout ? 524 : 502,
        `Upstream provider failed mid-stream: ${failure.message}`,
        failure instanceof UpstreamTimeout ? "timeout" : "provider_unavailable",
        usageWireObj,
      ),
    );
  } else if (shutDown) {
    finishReason = "error";
    sink.write(
      encoder.fail(
        503,
        "Gatehouse is shutting down: the answer was cut short (what was generated is charged)",
        "server",
        usageWireObj,
      ),
    );
  } else if (!cancelled) {
    sink.write(encoder.finish(usageWireObj, finishReason));
  }
  sink.settling();
  try {
    await run.settle(hold, a, charge, {
      finishReason: cancelled ? (finishReason ?? "cancelled") : finishReason,
      streamed: true,
      cancelled,
      upstreamId,
      latencyMs,
      generationTimeMs: performance.now() - t0,
      output: output.text(),
    });
  } finally {
    const done = cancelled && !shutDown ? "" : encoder.done;
    sink.end(done === "" ? undefined : done);
  }
}

/** Whether a stream delta carries generated text: content, a refusal, reasoning, a tool call's piece. */
function carriesOutput(d: Record<string, unknown>): boolean {
  for (const k of ["content", "refusal", "reasoning"]) {
    const v = d[k];
    if (typeof v === "string" && v.length > 0) return true;
  }
  return Array.isArray(d.tool_calls) && d.tool_calls.length > 0;
}

/**
 * The usage of a stream cut short (it never reached its end, so its final usage never came), or
 * of one whose text went on after its last usage, where the upstream reported one on the way:
 * that report may be stale, sent before the last text or
 * counting its own chunk alone (not every server's mid-stream usage is cumulative). What the
 * client was sent was generated, so the completion (and its reasoning) is at least the count of
 * it (at most the completion tokens the hold covers: GeneratedOutput.count): the larger of the two. A report that did cover everything differs from the count only by
 * the tokenizer, as a stream without usage is counted anyway. The prompt's count stands.
 */
function atLeastGenerated(
  reported: ProviderUsage,
  output: GeneratedOutput,
  maxCompletion: number,
): ProviderUsage {
  const counted = output.count(maxCompletion);
  return {
    ...reported,
    completionTokens: Math.max(reported.completionTokens, counted.completion),
    reasoningTokens: Math.max(reported.reasoningTokens, counted.reasoning),
  };
}
