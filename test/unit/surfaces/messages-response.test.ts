import { describe, expect, it } from "vitest";
import { ANTHROPIC_REASONING_FORMAT as F } from "../../../src/gateway/providers/anthropic/anthropic-request.js";
import { fromAnthropicMessage } from "../../../src/gateway/providers/anthropic/anthropic-response.js";
import { anthropicErrorBody } from "../../../src/gateway/surfaces/messages/messages-errors.js";
import { chatToMessage } from "../../../src/gateway/surfaces/messages/messages-response.js";

/**
 * A chat completion as the gateway answers it → an Anthropic Message
 * (src/gateway/surfaces/messages/messages-response.ts), and the Anthropic error body
 * (messages-errors.ts).
 */
const usage = {
  prompt_tokens: 100,
  completion_tokens: 20,
  total_tokens: 120,
  prompt_tokens_details: { cached_tokens: 30 },
  completion_tokens_details: { reasoning_tokens: 5 },
  cost: 0.00042,
  is_byok: false,
  cost_details: {
    upstream_inference_cost: null,
    upstream_inference_prompt_cost: 0.0003,
    upstream_inference_completions_cost: 0.00012,
  },
};

const completion = (message: Record<string, unknown>, finish: string | null = "stop") => ({
  id: "gen-1795773012453-abc",
  provider: "Anthropic",
  model: "anthropic/claude",
  object: "chat.completion",
  created: 1795773012,
  system_fingerprint: null,
  choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
  usage,
});

describe("chatToMessage", () => {
  it("a text answer: the Message's keys, the gen- id, provider, and usage in Anthropic's token classes", () => {
    expect(chatToMessage(completion({ content: "Hello" }))).toEqual({
      id: "gen-1795773012453-abc",
      type: "message",
      role: "assistant",
      model: "anthropic/claude",
      content: [{ type: "text", text: "Hello", citations: null }],
      stop_reason: "end_turn",
      stop_sequence: null,
      stop_details: null,
      container: null,
      provider: "Anthropic",
      usage: {
        // Anthropic's input excludes cache reads: 100 prompt tokens, 30 of them cached.
        input_tokens: 70,
        cache_read_input_tokens: 30,
        cache_creation_input_tokens: 0,
        cache_creation: null,
        output_tokens: 20,
        output_tokens_details: { thinking_tokens: 5 },
        server_tool_use: null,
        service_tier: null,
        inference_geo: null,
        cost: 0.00042,
        is_byok: false,
        cost_details: usage.cost_details,
      },
    });
  });

  it("cache writes, when the chat usage reports them, are their own class", () => {
    const c = completion({ content: "x" });
    c.usage = {
      ...usage,
      prompt_tokens_details: { cached_tokens: 30, cache_write_tokens: 50 },
    } as typeof usage;
    expect(chatToMessage(c).usage).toMatchObject({
      input_tokens: 20,
      cache_read_input_tokens: 30,
      cache_creation_input_tokens: 50,
    });
  });

  const stops: [string | null, string | null][] = [
    ["stop", "end_turn"],
    ["length", "max_tokens"],
    ["tool_calls", "tool_use"],
    ["content_filter", "refusal"],
    [null, null],
    ["something_new", "end_turn"],
  ];
  for (const [finish, stop] of stops) {
    it(`finish_reason ${finish} → stop_reason ${stop}`, () => {
      expect(chatToMessage(completion({ content: "x" }, finish)).stop_reason).toBe(stop);
    });
  }

  it("thinking blocks from Anthropic's reasoning_details: pieces joined by index, signature and redacted kept, first", () => {
    const m = chatToMessage(
      completion({
        content: "answer",
        reasoning: "ab",
        reasoning_details: [
          { type: "reasoning.text", text: "a", format: F, index: 0 },
          { type: "reasoning.text", text: "b", format: F, index: 0 },
          { type: "reasoning.text", signature: "SIG", format: F, index: 0 },
          { type: "reasoning.encrypted", data: "ENC", format: F, index: 1 },
          { type: "reasoning.encrypted", data: "OTHER", format: "openai-responses-v1", index: 2 },
        ],
      }),
    );
    expect(m.content).toEqual([
      { type: "thinking", thinking: "ab", signature: "SIG" },
      { type: "redacted_thinking", data: "ENC" },
      { type: "text", text: "answer", citations: null },
    ]);
  });

  it("another provider's reasoning is one unsigned thinking block of its text", () => {
    const m = chatToMessage(
      completion({
        content: "answer",
        reasoning: "thought",
        reasoning_details: [{ type: "reasoning.summary", summary: "thought", format: "openai-responses-v1" }],
      }),
    );
    expect(m.content).toEqual([
      { type: "thinking", thinking: "thought", signature: "" },
      { type: "text", text: "answer", citations: null },
    ]);
  });

  it("tool calls → tool_use blocks with parsed input; unparsable or non-object arguments → {}; stop → tool_use", () => {
    const m = chatToMessage(
      completion(
        {
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "a", arguments: '{"x":[1,2],"y":"z"}' } },
            { id: "call_2", type: "function", function: { name: "b", arguments: '{"x":' } },
            { id: "call_3", type: "function", function: { name: "c", arguments: "[1]" } },
            { id: "call_4", type: "function", function: { name: "d", arguments: "" } },
          ],
        },
        "stop",
      ),
    );
    expect(m.content).toEqual([
      { type: "tool_use", id: "call_1", name: "a", input: { x: [1, 2], y: "z" } },
      { type: "tool_use", id: "call_2", name: "b", input: {} },
      { type: "tool_use", id: "call_3", name: "c", input: {} },
      { type: "tool_use", id: "call_4", name: "d", input: {} },
    ]);
    expect(m.stop_reason).toBe("tool_use");
  });

  it("a refusal is the text, with stop_reason refusal", () => {
    const m = chatToMessage(completion({ content: null, refusal: "I can't help with that." }));
    expect(m.content).toEqual([{ type: "text", text: "I can't help with that.", citations: null }]);
    expect(m.stop_reason).toBe("refusal");
  });

  it("an Anthropic answer round-trips through the provider adapter and back to the same blocks", () => {
    const upstream = {
      id: "msg_1",
      content: [
        { type: "thinking", thinking: "let me see", signature: "SIG" },
        { type: "text", text: "Running it." },
        { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    const chat = fromAnthropicMessage(upstream);
    const m = chatToMessage({ id: "gen-1", model: "m", choices: chat.choices, usage: {} });
    expect(m.content).toEqual([
      { type: "thinking", thinking: "let me see", signature: "SIG" },
      { type: "text", text: "Running it.", citations: null },
      { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
    ]);
    expect(m.stop_reason).toBe("tool_use");
  });
});

describe("anthropicErrorBody", () => {
  const table: [number, string, string][] = [
    [400, "invalid_request_error", "invalid_request"],
    [401, "authentication_error", "authentication"],
    [402, "billing_error", "payment_required"],
    [403, "permission_error", "permission_denied"],
    [404, "not_found_error", "not_found"],
    [408, "timeout_error", "timeout"],
    [409, "invalid_request_error", "invalid_request"],
    [413, "request_too_large", "payload_too_large"],
    [429, "rate_limit_error", "rate_limit_exceeded"],
    [500, "api_error", "server"],
    [502, "api_error", "provider_unavailable"],
    [503, "overloaded_error", "provider_unavailable"],
    [524, "timeout_error", "timeout"],
    [529, "overloaded_error", "provider_overloaded"],
  ];
  for (const [status, type, errorType] of table) {
    it(`${status} → ${type}`, () => {
      expect(anthropicErrorBody(status, "m", null)).toEqual({
        type: "error",
        error: { type, message: "m", error_type: errorType },
        request_id: null,
      });
    });
  }

  it("keeps Gatehouse's metadata under error.metadata; a canonical metadata.error_type is the body's", () => {
    const refusal = { scope: "workspace", limit_usd: 5 };
    expect(anthropicErrorBody(402, "Budget reached", "gen-1", refusal)).toEqual({
      type: "error",
      error: {
        type: "billing_error",
        message: "Budget reached",
        error_type: "payment_required",
        metadata: refusal,
      },
      request_id: "gen-1",
    });
    const provider = { error_type: "provider", provider_status: 500 };
    expect((anthropicErrorBody(502, "x", null, provider).error as Record<string, unknown>).error_type).toBe(
      "provider_unavailable",
    );
    expect(
      (anthropicErrorBody(502, "x", null, { error_type: "timeout" }).error as Record<string, unknown>)
        .error_type,
    ).toBe("timeout");
  });
});
