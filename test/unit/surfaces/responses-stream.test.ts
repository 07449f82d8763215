import { describe, expect, it } from "vitest";
import type { ProviderChunk } from "../../../src/gateway/providers/provider.js";
import { chatToResponse } from "../../../src/gateway/surfaces/responses/responses-result.js";
import {
  ResponsesStreamEncoder,
  responsesStream,
} from "../../../src/gateway/surfaces/responses/responses-stream.js";
import {
  CALL_ANSWER,
  CALL_CHUNKS,
  COMPLETED,
  CREATED,
  ID,
  MODEL,
  REASONING_ANSWER,
  REASONING_CHUNKS,
  TEXT_ANSWER,
  TEXT_CHUNKS,
  TOOLS_REQUEST,
  USAGE,
  echoOf,
  eventsOf,
  streamOf,
  type Event,
} from "./responses-answers.js";

/**
 * Chat chunks → Responses events (docs/surfaces/responses.md "Streaming"): the exact event order
 * for text, reasoning then text, and a function call, with sequence numbers from 0; full
 * snapshots; the final response equal to the whole answer's result object; the failure and
 * incomplete ends.
 */

type Json = Record<string, unknown>;
const seqOf = (events: Event[]) => events.map((e) => [e.data.sequence_number, e.data.type]);
const chunk = (delta: Json, finish: string | null = null, logprobs?: Json): ProviderChunk => ({
  upstreamId: null,
  usage: null,
  choices: [{ index: 0, delta, finish_reason: finish, ...(logprobs ? { logprobs } : {}) }],
});

function check(sse: string): Event[] {
  expect(sse.endsWith("\n\ndata: [DONE]\n\n")).toBe(true);
  const events = eventsOf(sse);
  for (const e of events) expect(e.event).toBe(e.data.type);
  expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_e, i) => i));
  return events;
}

const REQUIRED = [
  "id",
  "object",
  "created_at",
  "completed_at",
  "status",
  "model",
  "output",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "error",
  "incomplete_details",
  "instructions",
  "metadata",
  "temperature",
  "top_p",
  "presence_penalty",
  "frequency_penalty",
];

describe("ResponsesStreamEncoder: event order", () => {
  it("text: created, in_progress, the message's events, completed (facts' order)", () => {
    const events = check(streamOf(TEXT_CHUNKS));
    expect(seqOf(events)).toEqual([
      [0, "response.created"],
      [1, "response.in_progress"],
      [2, "response.output_item.added"],
      [3, "response.content_part.added"],
      [4, "response.output_text.delta"],
      [5, "response.output_text.delta"],
      [6, "response.output_text.done"],
      [7, "response.content_part.done"],
      [8, "response.output_item.done"],
      [9, "response.completed"],
    ]);
    const msgId = `msg_${ID}_0`;
    expect(events[2]?.data).toEqual({
      type: "response.output_item.added",
      sequence_number: 2,
      output_index: 0,
      item: { type: "message", id: msgId, role: "assistant", status: "in_progress", content: [] },
    });
    expect(events[3]?.data).toEqual({
      type: "response.content_part.added",
      sequence_number: 3,
      item_id: msgId,
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [], logprobs: [] },
    });
    expect(events[4]?.data).toEqual({
      type: "response.output_text.delta",
      item_id: msgId,
      output_index: 0,
      content_index: 0,
      delta: "Hel",
      logprobs: [],
      sequence_number: 4,
    });
    expect(events[6]?.data).toMatchObject({ text: "Hello", logprobs: [] });
    expect(events[7]?.data.part).toEqual({
      type: "output_text",
      text: "Hello",
      annotations: [],
      logprobs: [],
    });
    expect((events[8]?.data.item as Json).status).toBe("completed");
  });

  it("reasoning then text: the reasoning item closes (its text and signature) before the message opens", () => {
    const events = check(streamOf(REASONING_CHUNKS));
    expect(seqOf(events)).toEqual([
      [0, "response.created"],
      [1, "response.in_progress"],
      [2, "response.output_item.added"],
      [3, "response.content_part.added"],
      [4, "response.reasoning_text.delta"],
      [5, "response.reasoning_text.delta"],
      [6, "response.reasoning_text.done"],
      [7, "response.content_part.done"],
      [8, "response.output_item.done"],
      [9, "response.output_item.added"],
      [10, "response.content_part.added"],
      [11, "response.output_text.delta"],
      [12, "response.output_text.done"],
      [13, "response.content_part.done"],
      [14, "response.output_item.done"],
      [15, "response.completed"],
    ]);
    const rsId = `rs_${ID}_0`;
    expect(events[2]?.data.item).toEqual({ type: "reasoning", id: rsId, status: "in_progress", summary: [] });
    expect(events[3]?.data).toMatchObject({
      item_id: rsId,
      content_index: 0,
      part: { type: "reasoning_text", text: "" },
    });
    expect(events[6]?.data).toMatchObject({ item_id: rsId, content_index: 0, text: "Thinking" });
    // The signature came in a piece of its own, after the text: it is in the item that is done.
    expect(events[8]?.data.item).toMatchObject({
      type: "reasoning",
      status: "completed",
      signature: "sig-1",
      content: [{ type: "reasoning_text", text: "Thinking" }],
    });
    expect(events[9]?.data).toMatchObject({ output_index: 1, item: { type: "message", id: `msg_${ID}_1` } });
  });

  it("a function call: added with empty arguments, the argument deltas, done with name and arguments", () => {
    const events = check(streamOf(CALL_CHUNKS));
    expect(seqOf(events)).toEqual([
      [0, "response.created"],
      [1, "response.in_progress"],
      [2, "response.output_item.added"],
      [3, "response.function_call_arguments.delta"],
      [4, "response.function_call_arguments.delta"],
      [5, "response.function_call_arguments.done"],
      [6, "response.output_item.done"],
      [7, "response.completed"],
    ]);
    const fcId = `fc_${ID}_0`;
    expect(events[2]?.data.item).toEqual({
      type: "function_call",
      id: fcId,
      call_id: "call_a",
      name: "close_agent",
      namespace: "multi_agent_v1",
      arguments: "",
      status: "in_progress",
    });
    expect(events[3]?.data).toEqual({
      type: "response.function_call_arguments.delta",
      item_id: fcId,
      output_index: 0,
      delta: '{"target"',
      sequence_number: 3,
    });
    expect(events[5]?.data).toEqual({
      type: "response.function_call_arguments.done",
      sequence_number: 5,
      item_id: fcId,
      output_index: 0,
      name: "close_agent",
      arguments: '{"target":"x"}',
    });
    expect(events[6]?.data.item).toMatchObject({
      status: "completed",
      arguments: '{"target":"x"}',
      namespace: "multi_agent_v1",
    });
  });

  it("summaries: a summary part with its deltas and done events", () => {
    const summary = (s: string) => ({
      reasoning: s,
      reasoning_details: [{ type: "reasoning.summary", summary: s, index: 0 }],
    });
    const events = check(
      streamOf([chunk(summary("Plan")), chunk(summary(" it")), chunk({ content: "ok" }, "stop")]),
    );
    expect(events.slice(2, 8).map((e) => e.data.type)).toEqual([
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
    ]);
    expect(events[3]?.data).toMatchObject({ summary_index: 0, part: { type: "summary_text", text: "" } });
    expect(events[4]?.data).toMatchObject({ summary_index: 0, delta: "Plan" });
    expect(events[6]?.data).toMatchObject({ summary_index: 0, text: "Plan it" });
    expect(events[7]?.data.part).toEqual({ type: "summary_text", text: "Plan it" });
    // The plain `reasoning` repeats the summary's text: not sent twice as reasoning text.
    expect(events.some((e) => e.data.type === "response.reasoning_text.delta")).toBe(false);
  });

  it("plain reasoning, then reasoning with details: each piece sent once, the item done with all of it", () => {
    const events = check(
      streamOf([
        chunk({ reasoning: "ab" }),
        chunk({ reasoning: "cd", reasoning_details: [{ type: "reasoning.text", text: "cd", index: 0 }] }),
        chunk({ content: "x" }, "stop"),
      ]),
    );
    const deltas = events
      .filter((e) => e.data.type === "response.reasoning_text.delta")
      .map((e) => e.data.delta);
    expect(deltas).toEqual(["ab", "cd"]);
    const done = events.find((e) => e.data.type === "response.output_item.done")?.data.item as Json;
    expect(done.content).toEqual([{ type: "reasoning_text", text: "abcd" }]);
  });

  it("text then a refusal: the text part closes, a refusal part opens in the same message", () => {
    const events = check(streamOf([chunk({ content: "Hm" }), chunk({ refusal: "No" }), chunk({}, "stop")]));
    expect(events.slice(2, -1).map((e) => [e.data.type, e.data.content_index])).toEqual([
      ["response.output_item.added", undefined],
      ["response.content_part.added", 0],
      ["response.output_text.delta", 0],
      ["response.output_text.done", 0],
      ["response.content_part.done", 0],
      ["response.content_part.added", 1],
      ["response.refusal.delta", 1],
      ["response.refusal.done", 1],
      ["response.content_part.done", 1],
      ["response.output_item.done", undefined],
    ]);
    expect((events.at(-2)?.data.item as Json).content).toEqual([
      { type: "output_text", text: "Hm", annotations: [], logprobs: [] },
      { type: "refusal", refusal: "No" },
    ]);
  });

  it("text then two calls: each new item closes the one before", () => {
    const call = (index: number, id: string, args: string) => ({
      tool_calls: [{ index, id, function: { name: "exec_command", arguments: args } }],
    });
    const events = check(
      streamOf([
        chunk({ content: "Let me" }),
        chunk(call(0, "c0", "{}")),
        chunk(call(1, "c1", "{}")),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(
      events
        .filter((e) => String(e.data.type).startsWith("response.output_item"))
        .map((e) => [e.data.type, e.data.output_index]),
    ).toEqual([
      ["response.output_item.added", 0],
      ["response.output_item.done", 0],
      ["response.output_item.added", 1],
      ["response.output_item.done", 1],
      ["response.output_item.added", 2],
      ["response.output_item.done", 2],
    ]);
  });

  it("a piece for a call already closed is not sent, but the final response has it", () => {
    const piece = (index: number, args: string, id?: string) => ({
      tool_calls: [
        {
          index,
          ...(id ? { id } : {}),
          function: { ...(id ? { name: "exec_command" } : {}), arguments: args },
        },
      ],
    });
    const events = check(
      streamOf([
        chunk(piece(0, '{"a"', "c0")),
        chunk(piece(1, "{}", "c1")),
        chunk(piece(0, ":1}")),
        chunk({}, "tool_calls"),
      ]),
    );
    const deltas = events.filter((e) => e.data.type === "response.function_call_arguments.delta");
    expect(deltas.map((e) => e.data.delta)).toEqual(['{"a"', "{}"]);
    const final = events.at(-1)?.data.response as Json;
    expect((final.output as Json[]).map((o) => o.arguments)).toEqual(['{"a":1}', "{}"]);
  });

  it("log probabilities ride on the text deltas", () => {
    const lp = { content: [{ token: "Hi", logprob: -0.5, bytes: [72, 105], top_logprobs: [] }] };
    const events = check(streamOf([chunk({ content: "Hi" }, null, lp), chunk({}, "stop")]));
    const expected = [{ token: "Hi", logprob: -0.5, bytes: [72, 105], top_logprobs: [] }];
    expect(events.find((e) => e.data.type === "response.output_text.delta")?.data.logprobs).toEqual(expected);
    expect(events.find((e) => e.data.type === "response.output_text.done")?.data.logprobs).toEqual(expected);
  });

  it("an answer with nothing in it is an empty message", () => {
    const events = check(streamOf([chunk({}, "stop")]));
    expect(events.slice(2).map((e) => e.data.type)).toEqual([
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
  });
});

describe("ResponsesStreamEncoder: snapshots and ends", () => {
  it("created and in_progress are full snapshots with no output", () => {
    const events = check(streamOf(TEXT_CHUNKS, { ...TOOLS_REQUEST, instructions: "be brief" }));
    for (const e of events.slice(0, 2)) {
      const r = e.data.response as Json;
      for (const k of REQUIRED) expect(r, k).toHaveProperty(k);
      expect(r).toMatchObject({
        id: ID,
        object: "response",
        created_at: CREATED,
        model: MODEL,
        status: "in_progress",
        completed_at: null,
        output: [],
        instructions: "be brief",
        tools: TOOLS_REQUEST.tools,
      });
      expect(r).not.toHaveProperty("usage");
    }
  });

  const wholes: [string, ProviderChunk[], Json][] = [
    ["text", TEXT_CHUNKS, TEXT_ANSWER as unknown as Json],
    ["reasoning then text", REASONING_CHUNKS, REASONING_ANSWER as unknown as Json],
    ["a function call", CALL_CHUNKS, CALL_ANSWER as unknown as Json],
  ];
  it.each(wholes)(
    "%s: the final response is the result object of the same answer whole",
    (_n, chunks, whole) => {
      const final = check(streamOf(chunks)).at(-1)?.data.response;
      const expected = chatToResponse(whole as never, echoOf(), {
        createdAt: CREATED,
        completedAt: COMPLETED,
      });
      expect(final).toEqual(expected);
      // Same keys in the same order: one object, however it was built.
      expect(JSON.stringify(final)).toBe(JSON.stringify(expected));
    },
  );

  it("finish reason length → response.incomplete, the open item incomplete", () => {
    const events = check(streamOf([chunk({ content: "Hel" }), chunk({}, "length")]));
    expect(events.at(-2)?.data.item).toMatchObject({ status: "incomplete" });
    expect(events.at(-1)?.data).toMatchObject({
      type: "response.incomplete",
      response: {
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        completed_at: COMPLETED,
      },
    });
  });

  it("a failure: response.failed with error, error_type, the output so far and the usage; then [DONE]", () => {
    const enc = new ResponsesStreamEncoder({ id: ID, model: MODEL, createdAt: CREATED, echo: echoOf() });
    const sse =
      enc.open() +
      enc.chunk(chunk({ content: "Hal" })) +
      enc.fail(502, "Upstream provider failed mid-stream: reset", "provider_unavailable", USAGE) +
      enc.done;
    const events = check(sse);
    expect(events.map((e) => e.data.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.failed",
    ]);
    const r = events.at(-1)?.data.response as Json;
    expect(r).toMatchObject({
      status: "failed",
      completed_at: null,
      error: { code: "server_error", message: "Upstream provider failed mid-stream: reset" },
      error_type: "provider_unavailable",
      usage: { input_tokens: 10, output_tokens: 5 },
      output: [{ type: "message", status: "incomplete", content: [{ type: "output_text", text: "Hal" }] }],
    });
    const limited = eventsOf(
      new ResponsesStreamEncoder({ id: ID, model: MODEL, createdAt: CREATED, echo: echoOf() }).fail(
        429,
        "slow down",
        "rate_limit_exceeded",
        USAGE,
      ),
    );
    expect(limited.map((e) => e.data.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.failed",
    ]);
    expect((limited.at(-1)?.data.response as Json).error).toEqual({
      code: "rate_limit_exceeded",
      message: "slow down",
    });
  });

  it("open is sent once; a chunk before it opens the stream itself", () => {
    const enc = new ResponsesStreamEncoder({ id: ID, model: MODEL, createdAt: CREATED, echo: echoOf() });
    const first = enc.chunk(chunk({ content: "x" }));
    expect(
      eventsOf(first)
        .map((e) => e.data.type)
        .slice(0, 2),
    ).toEqual(["response.created", "response.in_progress"]);
    expect(enc.open()).toBe("");
  });

  it("ids and models with characters JSON must escape still make valid events", () => {
    const h = { id: 'gen-"q"\\\u2028', created: CREATED, model: "m\n", provider: "P" };
    const enc = responsesStream(echoOf(), () => COMPLETED)(h);
    let sse = enc.open();
    for (const c of [...REASONING_CHUNKS.slice(0, 4), ...CALL_CHUNKS]) sse += enc.chunk(c);
    const events = check(sse + enc.finish(USAGE, "tool_calls") + enc.done);
    const final = events.at(-1)?.data.response as Json;
    expect(final).toMatchObject({ id: h.id, model: h.model, completed_at: COMPLETED });
    expect((final.output as Json[]).map((o) => o.id)).toEqual([
      `rs_${h.id}_0`,
      `msg_${h.id}_1`,
      `fc_${h.id}_2`,
    ]);
  });
});
