import type { Gateway } from "../gateway.js";
import { firstStarted } from "./fallbacks.js";
import { GeneratedOutput } from "./generated.js";
import { ChatRun, upstreamFailure, type ChatCall } from "./serve.js";
import { usageWire } from "./wire.js";

export interface Answer {
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/**
 * A non-streamed chat completion: attempts in order, each reserved first; a retryable failure
 * (429, 5xx, timeout, connection) finishes the hold and tries the next; success records the
 * generation, settles the hold and answers. A failed attempt is charged nothing, except one given
 * up on after its request reached the provider (a timeout, a shutdown's grace running out): its
 * prompt (ChatRun.attemptFailed). A client that leaves before an attempt is sent stops the request
 * there (nothing forwarded, nothing charged); one that leaves while the upstream generates does
 * not cancel it: the answer is recorded as cancelled and charged, as the provider bills it (only a
 * shutdown's grace cancels it).
 */
export async function completeChat(gw: Gateway, call: ChatCall): Promise<Answer> {
  const run = await new ChatRun(gw, call).withByok();
  // The adapter enforces the provider's first-byte deadline (UpstreamTimeout), and stops when a
  // shutdown's grace runs out.
  const s = await firstStarted(
    run,
    () => call.clientGone.aborted,
    false,
    (a, body) => a.provider.adapter.complete(run.upstreamCall(a, body), call.upstreamStop),
  );
  if ("stoppedAfter" in s) throw upstreamFailure(s.stoppedAfter);
  const { a, hold, started: res } = s;
  const elapsed = performance.now() - s.t0;
  try {
    const first = res.choices[0];
    // Counted (when the upstream reported no usage): every choice, its reasoning and tool calls.
    const output = new GeneratedOutput();
    for (const c of res.choices) output.addMessage(c.index, c.message);
    const charge = run.chargeOf(a, run.usageOf(res.usage, output, hold.plan.maxTokens));
    await run.settle(hold, a, charge, {
      finishReason: first?.finish_reason ?? null,
      streamed: false,
      cancelled: call.clientGone.aborted,
      upstreamId: res.upstreamId,
      latencyMs: elapsed,
      generationTimeMs: elapsed,
      output: output.text(),
    });
    return {
      headers: run.answerHeaders(a),
      body: {
        id: run.id,
        provider: a.provider.name,
        model: a.model.id,
        object: "chat.completion",
        created: run.created,
        system_fingerprint: null,
        choices: res.choices.map((c) => ({
          index: c.index,
          message: {
            role: "assistant",
            content: c.message.content,
            ...(c.message.tool_calls && c.message.tool_calls.length > 0
              ? { tool_calls: c.message.tool_calls }
              : {}),
            // Left out when the client asked not to see it (charged all the same).
            ...(c.message.reasoning && !run.hideReasoning ? { reasoning: c.message.reasoning } : {}),
            ...(c.message.reasoning_details && !run.hideReasoning
              ? { reasoning_details: c.message.reasoning_details }
              : {}),
            ...(typeof c.message.refusal === "string" ? { refusal: c.message.refusal } : {}),
          },
          finish_reason: c.finish_reason,
          ...(c.logprobs ? { logprobs: c.logprobs } : {}),
        })),
        usage: usageWire(charge),
      },
    };
  } catch (err) {
    // Settled above; should anything fail before that, the hold is released (finishing a hold is
    // idempotent) and the error is the request's.
    await hold.release();
    throw err;
  }
}
