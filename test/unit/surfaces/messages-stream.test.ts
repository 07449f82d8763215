import { describe, expect, it } from "vitest";
import { ANTHROPIC_REASONING_FORMAT as F } from "../../../src/gateway/providers/anthropic/anthropic-request.js";
import { AnthropicStream } from "../../../src/gateway/providers/anthropic/anthropic-response.js";
import type { ProviderChunk } from "../../../src/gateway/providers/provider.js";
import { MessagesStreamEncoder } from "../../../src/gateway/surfaces/messages/messages-stream.js";
import { parseSse, shape } from "./messages-sse.js";

/**
 * The stream encoder (src/gateway/surfaces/messages/messages-stream.ts): every event named, the
 * event order of Anthropic's streams, block indexes from 0, one block open at a time.
 */
const head = { id: "gen-1795773012453-abc", model: "anthropic/claude", provider: "Anthropic" };
const usage = {
  prompt_tokens: 100,
  completion_tokens: 20,
  total_tokens: 120,
  prompt_tokens_details: { cached_tokens: 30 },
  completion_tokens_details: { reasoning_tokens: 7 },
  cost: 0.00042,
  is_byok: false,
  cost_details: { upstream_inference_prompt_cost: 0.0003, upstream_inference_completions_cost: 0.00012 },
};
const chunk = (delta: Record<string, unknown>, finish: string | null = null): ProviderChunk => ({
  upstreamId: null,
  usage: null,
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** Runs chunks through a new encoder: start, each chunk, end. */
function encode(
  chunks: ProviderChunk[],
  finish: string | null,
  prompt?: { promptTokens: number; cachedTokens: number },
) {
  const e = new MessagesStreamEncoder(head);
  let text = e.start(prompt);
  for (const c of chunks) text += e.chunk(c);
  text += e.end(usage, finish);
  return { text, events: parseSse(text) };
}

/** An Anthropic upstream's events through the provider adapter's stream translation: the chunks it yields. */
function viaAdapter(events: Record<string, unknown>[]): ProviderChunk[] {
  const s = new AnthropicStream();
  return events.flatMap((ev) => {
    const c = s.next(ev);
    return c ? [c] : [];
  });
}

describe("MessagesStreamEncoder", () => {
  it("text: message_start, one text block, message_delta, message_stop", () => {
    const { text, events } = encode(
      [chunk({ role: "assistant", content: "Hel" }), chunk({ content: "lo" }), chunk({}, "stop")],
      "stop",
      { promptTokens: 100, cachedTokens: 30 },
    );
    expect(shape(events)).toEqual([
      "message_start",
      "content_block_start:0:text",
      "content_block_delta:0:text_delta",
      "content_block_delta:0:text_delta",
      "content_block_stop:0",
      "message_delta",
      "message_stop",
    ]);
    // Each event's data names the event, as Anthropic's do.
    for (const e of events) expect(e.data.type).toBe(e.event);
    expect(events[0]!.data.message).toEqual({
      id: head.id,
      type: "message",
      role: "assistant",
      model: head.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      container: null,
      usage: {
        input_tokens: 70,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 30,
        output_tokens: 0,
        cache_creation: null,
        output_tokens_details: null,
        server_tool_use: null,
        service_tier: null,
        inference_geo: null,
      },
      provider: "Anthropic",
    });
    expect(events[1]!.data.content_block).toEqual({ type: "text", text: "", citations: null });
    expect(events.slice(2, 4).map((e) => e.data.delta)).toEqual([
      { type: "text_delta", text: "Hel" },
      { type: "text_delta", text: "lo" },
    ]);
    expect(events[5]!.data).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null, stop_details: null, container: null },
      usage: {
        input_tokens: 70,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 30,
        output_tokens: 20,
        output_tokens_details: { thinking_tokens: 7 },
        server_tool_use: null,
        cost: 0.00042,
        is_byok: false,
        cost_details: usage.cost_details,
      },
    });
    expect(text.startsWith("event: message_start\ndata: {")).toBe(true);
  });

  it("thinking + text from an Anthropic upstream: the upstream's own block sequence, signature included", () => {
    const upstream = [
      {
        type: "message_start",
        message: { id: "msg_1", usage: { input_tokens: 70, cache_read_input_tokens: 30 } },
      },
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "thinking", thinking: "", signature: "" },
      },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let me " } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "think." } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "SIG==" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Answer" } },
      { type: "content_block_stop", index: 1 },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 20 } },
      { type: "message_stop" },
    ];
    const chunks = viaAdapter(upstream);
    const { events } = encode(chunks, "stop", chunks[0]!.prompt);
    expect(shape(events)).toEqual([
      "message_start",
      "content_block_start:0:thinking",
      "content_block_delta:0:thinking_delta",
      "content_block_delta:0:thinking_delta",
      "content_block_delta:0:signature_delta",
      "content_block_stop:0",
      "content_block_start:1:text",
      "content_block_delta:1:text_delta",
      "content_block_stop:1",
      "message_delta",
      "message_stop",
    ]);
    expect(events[1]!.data.content_block).toEqual({ type: "thinking", thinking: "", signature: "" });
    expect(events.slice(2, 5).map((e) => e.data.delta)).toEqual([
      { type: "thinking_delta", thinking: "Let me " },
      { type: "thinking_delta", thinking: "think." },
      { type: "signature_delta", signature: "SIG==" },
    ]);
    expect((events[0]!.data.message as { usage: unknown }).usage).toMatchObject({
      input_tokens: 70,
      cache_read_input_tokens: 30,
    });
  });

  it("tool calls (OpenAI-style deltas keyed by index): one tool_use block each, arguments as input_json_delta", () => {
    const { events } = encode(
      [
        chunk({ role: "assistant", content: "Checking." }),
        chunk({
          tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "ls", arguments: "" } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'th":"/"}' } }] }),
        chunk({
          tool_calls: [
            { index: 1, id: "call_b", type: "function", function: { name: "pwd", arguments: "{}" } },
          ],
        }),
        chunk({}, "tool_calls"),
      ],
      "tool_calls",
    );
    expect(shape(events)).toEqual([
      "message_start",
      "content_block_start:0:text",
      "content_block_delta:0:text_delta",
      "content_block_stop:0",
      "content_block_start:1:tool_use",
      "content_block_delta:1:input_json_delta",
      "content_block_delta:1:input_json_delta",
      "content_block_stop:1",
      "content_block_start:2:tool_use",
      "content_block_delta:2:input_json_delta",
      "content_block_stop:2",
      "message_delta",
      "message_stop",
    ]);
    expect(events[4]!.data.content_block).toEqual({ type: "tool_use", id: "call_a", name: "ls", input: {} });
    expect(events[5]!.data.delta).toEqual({ type: "input_json_delta", partial_json: '{"pa' });
    expect(events[8]!.data.content_block).toEqual({ type: "tool_use", id: "call_b", name: "pwd", input: {} });
    expect((events[11]!.data.delta as { stop_reason: string }).stop_reason).toBe("tool_use");
  });

  it("a stream that called tools stops with tool_use even when its upstream said stop", () => {
    const { events } = encode(
      [chunk({ tool_calls: [{ index: 0, id: "c", function: { name: "f", arguments: "{}" } }] })],
      "stop",
    );
    expect((events.at(-2)!.data.delta as { stop_reason: string }).stop_reason).toBe("tool_use");
  });

  it("a piece of an already closed tool call goes to that block's index, not lost", () => {
    const { events } = encode(
      [
        chunk({ tool_calls: [{ index: 0, id: "a", function: { name: "f", arguments: '{"x":' } }] }),
        chunk({ tool_calls: [{ index: 1, id: "b", function: { name: "g", arguments: "{}" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
      ],
      "tool_calls",
    );
    expect(shape(events).slice(1, -2)).toEqual([
      "content_block_start:0:tool_use",
      "content_block_delta:0:input_json_delta",
      "content_block_stop:0",
      "content_block_start:1:tool_use",
      "content_block_delta:1:input_json_delta",
      "content_block_delta:0:input_json_delta",
      "content_block_stop:1",
    ]);
  });

  it("another provider's reasoning text is one unsigned thinking block; redacted thinking a block of its own", () => {
    const { events } = encode(
      [
        chunk({
          reasoning: "hmm",
          reasoning_details: [{ type: "reasoning.summary", summary: "hmm", format: "x" }],
        }),
        chunk({ reasoning: " ok" }),
        chunk({ reasoning_details: [{ type: "reasoning.encrypted", data: "ENC", format: F, index: 1 }] }),
        chunk({ content: "done" }),
      ],
      "stop",
    );
    expect(shape(events).slice(1, -2)).toEqual([
      "content_block_start:0:thinking",
      "content_block_delta:0:thinking_delta",
      "content_block_delta:0:thinking_delta",
      "content_block_stop:0",
      "content_block_start:1:redacted_thinking",
      "content_block_stop:1",
      "content_block_start:2:text",
      "content_block_delta:2:text_delta",
      "content_block_stop:2",
    ]);
    expect(events[5]!.data.content_block).toEqual({ type: "redacted_thinking", data: "ENC" });
  });

  it("Anthropic's details carry the thinking; the duplicate `reasoning` text is not sent twice", () => {
    const { events } = encode(
      [
        chunk({
          reasoning: "abc",
          reasoning_details: [{ type: "reasoning.text", text: "abc", format: F, index: 0 }],
        }),
      ],
      "stop",
    );
    expect(events.filter((e) => e.event === "content_block_delta").map((e) => e.data.delta)).toEqual([
      { type: "thinking_delta", thinking: "abc" },
    ]);
  });

  it("a refusal is text, and the stream stops with refusal", () => {
    const { events } = encode([chunk({ refusal: "No." })], "stop");
    expect(shape(events)).toContain("content_block_delta:0:text_delta");
    expect((events.at(-2)!.data.delta as { stop_reason: string }).stop_reason).toBe("refusal");
  });

  it("message_start once: sent by the first chunk or the end when start was not called; start again is empty", () => {
    const e = new MessagesStreamEncoder(head);
    const first = e.chunk(chunk({ content: "x" }));
    expect(shape(parseSse(first))).toEqual([
      "message_start",
      "content_block_start:0:text",
      "content_block_delta:0:text_delta",
    ]);
    expect(e.start()).toBe("");
    const empty = new MessagesStreamEncoder(head);
    expect(shape(parseSse(empty.end(usage, "stop")))).toEqual([
      "message_start",
      "message_delta",
      "message_stop",
    ]);
  });

  it("characters JSON escapes survive in text, arguments and signatures", () => {
    const tricky = 'quote " backslash \\ newline \n line-sep \u2028 é';
    const { events } = encode(
      [
        chunk({ content: tricky }),
        chunk({ tool_calls: [{ index: 0, id: "i", function: { name: "f", arguments: tricky } }] }),
      ],
      "stop",
    );
    const deltas = events.filter((e) => e.event === "content_block_delta").map((e) => e.data.delta);
    expect(deltas).toEqual([
      { type: "text_delta", text: tricky },
      { type: "input_json_delta", partial_json: tricky },
    ]);
  });

  it("fail: an error event with the Anthropic error body", () => {
    const e = new MessagesStreamEncoder(head);
    const events = parseSse(e.fail(502, "Upstream provider failed mid-stream", "provider_unavailable"));
    expect(events).toEqual([
      {
        event: "error",
        data: {
          type: "error",
          error: {
            type: "api_error",
            message: "Upstream provider failed mid-stream",
            error_type: "provider_unavailable",
            metadata: { error_type: "provider_unavailable" },
          },
          request_id: head.id,
        },
      },
    ]);
  });
});
