import { describe, expect, it } from "vitest";
import {
  fromResponsesResult,
  RESPONSES_REASONING_FORMAT,
  ResponsesEvents,
  responsesUsage,
} from "../../../src/gateway/providers/openai/responses-answer.js";
import { nativeResponsesBody } from "../../../src/gateway/providers/openai/responses-request.js";
import {
  UpstreamError,
  type ProviderChunk,
  type UpstreamCall,
} from "../../../src/gateway/providers/provider.js";
import { carryDetails } from "../../../src/gateway/surfaces/responses/reasoning-carry.js";
import { nativeResponsesRequest } from "../../../src/gateway/surfaces/responses/responses-native.js";

/**
 * Native Responses pass-through, pure parts (docs/surfaces/responses.md "Native pass-through"):
 * the body sent to {base}/responses, a Responses result and a Responses stream read into the
 * chat shape the data plane uses, and Gatehouse's carried reasoning turned back into the
 * provider's own item.
 */
type Json = Record<string, unknown>;
const F = RESPONSES_REASONING_FORMAT;

const USAGE = {
  input_tokens: 21,
  input_tokens_details: { cached_tokens: 6 },
  output_tokens: 9,
  output_tokens_details: { reasoning_tokens: 3 },
  total_tokens: 30,
};
const PORT_USAGE = {
  promptTokens: 21,
  completionTokens: 9,
  cachedTokens: 6,
  cacheWriteTokens: 0,
  reasoningTokens: 3,
};

const message = (text: string): Json => ({
  type: "message",
  id: "msg_1",
  role: "assistant",
  content: [{ type: "output_text", text, annotations: [] }],
});
const call = (extra: Json = {}): Json => ({
  type: "function_call",
  id: "fc_1",
  call_id: "call_1",
  name: "get_weather",
  arguments: '{"city":"Paris"}',
  ...extra,
});
const reasoning: Json = {
  type: "reasoning",
  id: "rs_1",
  summary: [{ type: "summary_text", text: "Thinking." }],
  encrypted_content: "gAAAA-opaque",
};
const result = (output: Json[], extra: Json = {}): Json => ({
  id: "resp_1",
  object: "response",
  status: "completed",
  output,
  usage: USAGE,
  ...extra,
});

describe("responsesUsage", () => {
  it.each([
    ["full", USAGE, PORT_USAGE],
    [
      "no details",
      { input_tokens: 3, output_tokens: 2 },
      { ...PORT_USAGE, promptTokens: 3, completionTokens: 2, cachedTokens: 0, reasoningTokens: 0 },
    ],
    [
      "junk counts",
      { input_tokens: -1, output_tokens: "2" },
      { ...PORT_USAGE, promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0 },
    ],
    ["absent", undefined, null],
    ["not an object", 7, null],
  ])("%s", (_name, usage, expected) => {
    expect(responsesUsage(usage)).toEqual(expected);
  });
});

describe("fromResponsesResult", () => {
  it.each<[string, Json, Json]>([
    ["text", result([message("Hello")]), { content: "Hello", finish: "stop" }],
    [
      "two text parts",
      result([
        {
          ...message("He"),
          content: [
            { type: "output_text", text: "He" },
            { type: "output_text", text: "llo" },
          ],
        },
      ]),
      { content: "Hello", finish: "stop" },
    ],
    [
      "function call",
      result([call()]),
      {
        content: null,
        finish: "tool_calls",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
        ],
      },
    ],
    [
      "function call without arguments or call_id",
      result([call({ arguments: "", call_id: undefined })]),
      {
        content: null,
        finish: "tool_calls",
        tool_calls: [{ id: "fc_1", type: "function", function: { name: "get_weather", arguments: "{}" } }],
      },
    ],
    [
      "reasoning then text",
      result([reasoning, message("Hi")]),
      {
        content: "Hi",
        finish: "stop",
        reasoning: "Thinking.",
        reasoning_details: [
          { type: "reasoning.summary", summary: "Thinking.", format: F, index: 0, id: "rs_1" },
          { type: "reasoning.encrypted", data: "gAAAA-opaque", format: F, index: 1, id: "rs_1" },
        ],
      },
    ],
    [
      "refusal",
      result([{ ...message(""), content: [{ type: "refusal", refusal: "No." }] }]),
      { content: null, finish: "stop", refusal: "No." },
    ],
    [
      "incomplete at max_output_tokens",
      result([message("Hel")], { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }),
      { content: "Hel", finish: "length" },
    ],
    [
      "incomplete by content filter",
      result([], { status: "incomplete", incomplete_details: { reason: "content_filter" } }),
      { content: null, finish: "content_filter" },
    ],
    [
      "hosted tool item skipped",
      result([{ type: "web_search_call", id: "ws_1" }, message("Found")]),
      { content: "Found", finish: "stop" },
    ],
  ])("%s", (_name, body, want) => {
    const c = fromResponsesResult(body);
    expect(c.upstreamId).toBe("resp_1");
    expect(c.usage).toEqual(PORT_USAGE);
    const m = c.choices[0]!.message;
    expect(m.content).toBe(want.content);
    expect(c.choices[0]!.finish_reason).toBe(want.finish);
    for (const k of ["tool_calls", "reasoning", "reasoning_details", "refusal"] as const)
      expect(m[k], k).toEqual(want[k]);
  });

  it.each<[string, Json, number | null]>([
    [
      "failed with an error",
      result([], { status: "failed", error: { code: "server_error", message: "boom" } }),
      null,
    ],
    ["an error with a status code", { error: { code: 429, message: "slow down" } }, 429],
    ["failed without an error", result([], { status: "failed" }), null],
  ])("%s is an UpstreamError", (_name, body, status) => {
    let err: unknown;
    try {
      fromResponsesResult(body);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).status).toBe(status);
  });

  it("no output is a malformed answer", () => {
    expect(() => fromResponsesResult({ id: "resp_1", status: "completed" })).toThrow(UpstreamError);
  });
});

/** Reads a list of events; returns the chunks and the reader. */
function read(events: Json[]): { chunks: ProviderChunk[]; r: ResponsesEvents } {
  const r = new ResponsesEvents();
  const chunks: ProviderChunk[] = [];
  for (const e of events) {
    const c = r.next(e.type as string, e);
    if (c) chunks.push(c);
  }
  return { chunks, r };
}

const created = { type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } };
const completed = (output: Json[] = [], extra: Json = {}): Json => ({
  type: "response.completed",
  response: result(output, extra),
});
const deltas = (chunks: ProviderChunk[]): Json[] => chunks.map((c) => c.choices[0]!.delta);

describe("ResponsesEvents", () => {
  it.each<[string, Json[], Json[], string]>([
    [
      "text",
      [
        created,
        { type: "response.output_item.added", output_index: 0, item: { ...message(""), content: [] } },
        { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, delta: "Hel" },
        { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, delta: "lo" },
        { type: "response.output_text.done", item_id: "msg_1", output_index: 0, text: "Hello" },
        completed([message("Hello")]),
      ],
      [{ content: "Hel" }, { content: "lo" }, {}],
      "stop",
    ],
    [
      "function call, arguments in deltas",
      [
        created,
        { type: "response.output_item.added", output_index: 0, item: call({ arguments: "" }) },
        {
          type: "response.function_call_arguments.delta",
          item_id: "fc_1",
          output_index: 0,
          delta: '{"city":',
        },
        {
          type: "response.function_call_arguments.delta",
          item_id: "fc_1",
          output_index: 0,
          delta: '"Paris"}',
        },
        {
          type: "response.function_call_arguments.done",
          item_id: "fc_1",
          output_index: 0,
          arguments: '{"city":"Paris"}',
        },
        completed([call()]),
      ],
      [
        {
          tool_calls: [
            { index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } },
          ],
        },
        { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
        { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
        {},
      ],
      "tool_calls",
    ],
    [
      "function call, arguments only in .done (by output index)",
      [
        created,
        { type: "response.output_item.added", output_index: 1, item: call({ id: undefined, arguments: "" }) },
        { type: "response.function_call_arguments.done", output_index: 1, arguments: '{"city":"Rome"}' },
        completed([call()]),
      ],
      [
        {
          tool_calls: [
            { index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } },
          ],
        },
        { tool_calls: [{ index: 0, function: { arguments: '{"city":"Rome"}' } }] },
        {},
      ],
      "tool_calls",
    ],
    [
      "reasoning summary, then its encrypted content",
      [
        created,
        {
          type: "response.output_item.added",
          output_index: 0,
          item: { type: "reasoning", id: "rs_1", summary: [] },
        },
        {
          type: "response.reasoning_summary_text.delta",
          item_id: "rs_1",
          output_index: 0,
          summary_index: 0,
          delta: "Think",
        },
        {
          type: "response.reasoning_summary_text.delta",
          item_id: "rs_1",
          output_index: 0,
          summary_index: 0,
          delta: "ing.",
        },
        { type: "response.output_item.done", output_index: 0, item: reasoning },
        completed([reasoning]),
      ],
      [
        {
          reasoning: "Think",
          reasoning_details: [{ type: "reasoning.summary", summary: "Think", format: F, index: 0 }],
        },
        {
          reasoning: "ing.",
          reasoning_details: [{ type: "reasoning.summary", summary: "ing.", format: F, index: 0 }],
        },
        {
          reasoning_details: [
            { type: "reasoning.encrypted", data: "gAAAA-opaque", format: F, index: 1, id: "rs_1" },
          ],
        },
        {},
      ],
      "stop",
    ],
    [
      "reasoning text and a refusal",
      [
        created,
        {
          type: "response.reasoning_text.delta",
          item_id: "rs_1",
          output_index: 0,
          content_index: 0,
          delta: "Hmm",
        },
        { type: "response.refusal.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "No." },
        completed(),
      ],
      [
        {
          reasoning: "Hmm",
          reasoning_details: [{ type: "reasoning.text", text: "Hmm", format: F, index: 0 }],
        },
        { refusal: "No." },
        {},
      ],
      "stop",
    ],
    [
      "incomplete at the cap",
      [
        created,
        { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, delta: "Hel" },
        {
          type: "response.incomplete",
          response: result([], { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }),
        },
      ],
      [{ content: "Hel" }, {}],
      "length",
    ],
    [
      "unknown and empty events skipped",
      [
        created,
        { type: "response.content_part.added", item_id: "msg_1", output_index: 0 },
        { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, delta: "" },
        { type: "response.web_search_call.searching", item_id: "ws_1" },
        completed(),
      ],
      [{}],
      "stop",
    ],
  ])("%s", (_name, events, want, finish) => {
    const { chunks, r } = read(events);
    expect(deltas(chunks)).toEqual(want);
    expect(r.done).toBe(true);
    const last = chunks.at(-1)!;
    expect(last.choices[0]!.finish_reason).toBe(finish);
    expect(last.usage).toEqual(PORT_USAGE);
    expect(chunks.every((c) => c.upstreamId === "resp_1")).toBe(true);
  });

  it.each<[string, Json[], boolean]>([
    [
      "response.failed before any output",
      [
        created,
        {
          type: "response.failed",
          response: { status: "failed", error: { code: "server_error", message: "boom" } },
        },
      ],
      true,
    ],
    [
      "response.failed after output",
      [
        created,
        { type: "response.output_text.delta", delta: "Hi" },
        {
          type: "response.failed",
          response: { status: "failed", error: { code: "server_error", message: "boom" } },
        },
      ],
      false,
    ],
    [
      "an error event",
      [created, { type: "error", code: "rate_limit_exceeded", message: "slow down", param: null }],
      true,
    ],
  ])("%s throws an UpstreamError (retryable: %s)", (_name, events, retryable) => {
    let err: unknown;
    try {
      read(events);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).retryable).toBe(retryable);
  });
});

const callOf = (body: Json, cap: number | undefined, maxCompletionTokens = 4096): UpstreamCall => ({
  upstreamModel: "gpt-up",
  body: { messages: [], ...(cap !== undefined ? { max_tokens: cap } : {}) },
  timeoutMs: 1000,
  maxCompletionTokens,
  native: { kind: "openai-responses", body, headers: {} },
});

describe("nativeResponsesBody", () => {
  it.each<[string, Json, number | undefined, boolean, Json]>([
    [
      "router fields removed, unknown fields kept, model, cap, stream and store set",
      {
        model: "native/ok",
        models: ["native/ok", "local/ok"],
        provider: { sort: "price" },
        plugins: [],
        session_id: "s",
        trace: {},
        debug: {},
        cache_control: { type: "ephemeral" },
        input: "Hi",
        include: ["reasoning.encrypted_content"],
        truncation: "auto",
        max_output_tokens: 99_999,
        user: "u-1",
      },
      500,
      true,
      {
        model: "gpt-up",
        input: "Hi",
        include: ["reasoning.encrypted_content"],
        truncation: "auto",
        max_output_tokens: 500,
        user: "u-1",
        stream: true,
        store: false,
      },
    ],
    [
      "no cap in the body: the endpoint's maximum; stream_options only with a stream",
      { input: "Hi", stream_options: { include_obfuscation: false }, store: false },
      undefined,
      false,
      { model: "gpt-up", input: "Hi", max_output_tokens: 4096, stream: false, store: false },
    ],
    [
      "reasoning: the router's own fields removed, effort max as xhigh",
      {
        input: "Hi",
        reasoning: { effort: "max", summary: "auto", max_tokens: 100, enabled: true, exclude: false },
      },
      64,
      true,
      {
        model: "gpt-up",
        input: "Hi",
        reasoning: { effort: "xhigh", summary: "auto" },
        max_output_tokens: 64,
        stream: true,
        store: false,
      },
    ],
  ])("%s", (_name, body, cap, stream, want) => {
    expect(nativeResponsesBody(callOf(body, cap), body, stream)).toEqual(want);
  });
});

describe("nativeResponsesRequest: Gatehouse's carried reasoning turned back into the provider's", () => {
  const carried = (details: Json[]): Json => ({
    type: "reasoning",
    id: "rs_gatehouse_0",
    summary: [{ type: "summary_text", text: "Thinking." }],
    encrypted_content: carryDetails(details),
  });
  const own = [
    { type: "reasoning.summary", summary: "Thinking.", format: F, index: 0, id: "rs_1" },
    { type: "reasoning.encrypted", data: "gAAAA-opaque", format: F, index: 1, id: "rs_1" },
  ];
  const foreign = [
    { type: "reasoning.text", text: "Hmm", signature: "sig", format: "anthropic-claude-v1", index: 0 },
  ];
  const clientOwn = { type: "reasoning", summary: [], encrypted_content: "gAAAA-the-clients" };

  it.each<[string, unknown, unknown]>([
    ["a string input: unchanged", "Hi", "Hi"],
    [
      "a Responses provider's reasoning: its own item again",
      [{ role: "user", content: "Hi" }, carried(own), message("Hello")],
      [
        { role: "user", content: "Hi" },
        {
          type: "reasoning",
          id: "rs_1",
          summary: [{ type: "summary_text", text: "Thinking." }],
          encrypted_content: "gAAAA-opaque",
        },
        message("Hello"),
      ],
    ],
    ["another provider's reasoning: left out", [carried(foreign), message("Hello")], [message("Hello")]],
    ["a client's own reasoning item: as sent", [clientOwn, message("Hello")], [clientOwn, message("Hello")]],
  ])("%s", (_name, input, want) => {
    const raw = { model: "native/ok", input, store: false };
    const n = nativeResponsesRequest(raw);
    expect(n.kind).toBe("openai-responses");
    expect(n.body.input).toEqual(want);
    expect(n.body.model).toBe("native/ok");
  });
});
