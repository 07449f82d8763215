import { describe, expect, it } from "vitest";
import { CARRY_PREFIX } from "../../../src/gateway/surfaces/responses/reasoning-carry.js";
import { responsesUsage } from "../../../src/gateway/surfaces/responses/responses-items.js";
import { responsesToChat } from "../../../src/gateway/surfaces/responses/responses-request.js";
import { chatToResponse } from "../../../src/gateway/surfaces/responses/responses-result.js";
import {
  CALL_ANSWER,
  COMPLETED,
  CREATED,
  ID,
  MODEL,
  REASONING_ANSWER,
  REASONING_DETAILS,
  TEXT_ANSWER,
  TOOLS_REQUEST,
  USAGE,
  completion,
  echoOf,
} from "./responses-answers.js";

/**
 * A chat completion → the Responses result object (docs/surfaces/responses.md "Result object"):
 * every required key, the output items, incomplete answers, the usage under the Responses names,
 * and reasoning that goes back to the provider as it came.
 */

type Json = Record<string, unknown>;
const times = { createdAt: CREATED, completedAt: COMPLETED };
const resultOf = (c = TEXT_ANSWER, body: unknown = TOOLS_REQUEST) => chatToResponse(c, echoOf(body), times);

/** The result object's required keys (REQ and REQ·null). */
const REQUIRED = [
  "id",
  "object",
  "created_at",
  "model",
  "status",
  "output",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "completed_at",
  "error",
  "incomplete_details",
  "instructions",
  "metadata",
  "temperature",
  "top_p",
  "presence_penalty",
  "frequency_penalty",
];

const RESPONSES_USAGE = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 2, cache_write_tokens: 0 },
  output_tokens: 5,
  output_tokens_details: { reasoning_tokens: 1 },
  total_tokens: 15,
  cost: 0.000035,
  is_byok: false,
  cost_details: {
    upstream_inference_cost: null,
    upstream_inference_input_cost: 0.00001,
    upstream_inference_output_cost: 0.000025,
  },
};

describe("chatToResponse", () => {
  it("a text answer: one message, every required key, the echo after the response's own fields", () => {
    const r = resultOf(TEXT_ANSWER, { model: MODEL, input: "Hi", temperature: 0.5, metadata: { a: "b" } });
    for (const k of REQUIRED) expect(r, k).toHaveProperty(k);
    expect(r).toEqual({
      id: ID,
      object: "response",
      created_at: CREATED,
      completed_at: COMPLETED,
      status: "completed",
      model: MODEL,
      output: [
        {
          type: "message",
          id: `msg_${ID}_0`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: [] }],
        },
      ],
      output_text: "Hello",
      error: null,
      incomplete_details: null,
      usage: RESPONSES_USAGE,
      instructions: null,
      metadata: { a: "b" },
      temperature: 0.5,
      top_p: null,
      presence_penalty: null,
      frequency_penalty: null,
      tools: [],
      tool_choice: "auto",
      parallel_tool_calls: true,
      max_output_tokens: null,
      reasoning: null,
      text: { format: { type: "text" } },
      store: false,
    });
  });

  it("usage keys: cached and reasoning details always integers; cost_details under the Responses names", () => {
    expect(USAGE.cost_details).toHaveProperty("upstream_inference_prompt_cost");
    expect(responsesUsage(USAGE)).toEqual(RESPONSES_USAGE);
    // BYOK: the provider's charge is upstream_inference_cost.
    expect(
      responsesUsage({ ...USAGE, is_byok: true, cost: 0, cost_details: { upstream_inference_cost: 0.5 } }),
    ).toMatchObject({
      is_byok: true,
      cost: 0,
      cost_details: {
        upstream_inference_cost: 0.5,
        upstream_inference_input_cost: 0,
        upstream_inference_output_cost: 0,
      },
    });
    expect(responsesUsage({ prompt_tokens: 3, completion_tokens: 4 })).toEqual({
      input_tokens: 3,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 4,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 7,
    });
  });

  it("no usage in the completion: none in the result", () => {
    const { usage: _u, ...bare } = TEXT_ANSWER;
    expect(resultOf(bare)).not.toHaveProperty("usage");
  });

  it("a namespaced tool call → a function_call with its name and namespace; no empty message", () => {
    const r = resultOf(CALL_ANSWER);
    expect(r.output).toEqual([
      {
        type: "function_call",
        id: `fc_${ID}_0`,
        call_id: "call_a",
        name: "close_agent",
        namespace: "multi_agent_v1",
        arguments: '{"target":"x"}',
        status: "completed",
      },
    ]);
    expect(r.output_text).toBe("");
    expect(r.tools).toEqual(TOOLS_REQUEST.tools);
  });

  it("text and two calls: the message first, then each call; a call without id gets one", () => {
    const r = resultOf(
      completion(
        {
          role: "assistant",
          content: "Let me",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "exec_command", arguments: "{}" } },
            { type: "function", function: { name: "exec_command", arguments: '{"cmd":"ls"}' } },
          ],
        },
        "tool_calls",
      ),
    );
    const output = r.output as Json[];
    expect(output.map((o) => [o.type, o.id, o.call_id, o.name])).toEqual([
      ["message", `msg_${ID}_0`, undefined, undefined],
      ["function_call", `fc_${ID}_1`, "c1", "exec_command"],
      ["function_call", `fc_${ID}_2`, `call_${ID}_2`, "exec_command"],
    ]);
    expect(output[2]).not.toHaveProperty("namespace");
  });

  it("finish reason length → incomplete, max_output_tokens, the last item incomplete", () => {
    const r = resultOf(completion({ role: "assistant", content: "Hel" }, "length"));
    expect(r).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    expect((r.output as Json[])[0]?.status).toBe("incomplete");
    expect(resultOf(completion({ role: "assistant", content: "" }, "content_filter"))).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "content_filter" },
    });
  });

  it("an empty answer is an empty message", () => {
    const r = resultOf(completion({ role: "assistant", content: null }));
    expect(r.output).toEqual([
      {
        type: "message",
        id: `msg_${ID}_0`,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "", annotations: [], logprobs: [] }],
      },
    ]);
  });

  it("a refusal → a refusal part", () => {
    const r = resultOf(completion({ role: "assistant", content: null, refusal: "I can't" }));
    expect((r.output as Json[])[0]?.content).toEqual([{ type: "refusal", refusal: "I can't" }]);
  });

  it("log probabilities, entry for entry; bytes made from the token when chat gave none", () => {
    const c = {
      ...completion({ role: "assistant", content: "é" }),
      choices: [
        {
          message: { role: "assistant" as const, content: "é" },
          finish_reason: "stop",
          logprobs: {
            content: [
              {
                token: "é",
                logprob: -0.1,
                bytes: null,
                top_logprobs: [{ token: "e", logprob: -2, bytes: [101] }],
              },
            ],
          },
        },
      ],
    };
    const part = ((resultOf(c).output as Json[])[0]?.content as Json[])[0];
    expect(part?.logprobs).toEqual([
      {
        token: "é",
        logprob: -0.1,
        bytes: [195, 169],
        top_logprobs: [{ token: "e", logprob: -2, bytes: [101] }],
      },
    ]);
  });

  it("reasoning: a reasoning item before the message, its text, signature, format and carried details", () => {
    const r = resultOf(REASONING_ANSWER);
    const [rs, msg] = r.output as Json[];
    expect(rs).toMatchObject({
      type: "reasoning",
      id: `rs_${ID}_0`,
      status: "completed",
      summary: [],
      content: [{ type: "reasoning_text", text: "Thinking" }],
      format: "anthropic-claude-v1",
      signature: "sig-1",
    });
    expect(String(rs?.encrypted_content).startsWith(CARRY_PREFIX)).toBe(true);
    expect(msg).toMatchObject({ type: "message", id: `msg_${ID}_1` });
  });

  it("summaries become summary_text; plain reasoning without details becomes reasoning text, with nothing to carry", () => {
    const summarized = resultOf(
      completion({
        role: "assistant",
        content: "x",
        reasoning: "S1S2",
        reasoning_details: [
          { type: "reasoning.summary", summary: "S1", format: "openai-responses-v1", index: 0 },
          { type: "reasoning.summary", summary: "S2", format: "openai-responses-v1", index: 1 },
          { type: "reasoning.encrypted", data: "enc", format: "openai-responses-v1", index: 2 },
        ],
      }),
    );
    const rs = (summarized.output as Json[])[0];
    expect(rs?.summary).toEqual([{ type: "summary_text", text: "S1S2" }]);
    expect(rs).not.toHaveProperty("content");
    const plain = (
      resultOf(completion({ role: "assistant", content: "x", reasoning: "hmm" })).output as Json[]
    )[0];
    expect(plain).toEqual({
      type: "reasoning",
      id: `rs_${ID}_0`,
      status: "completed",
      summary: [],
      content: [{ type: "reasoning_text", text: "hmm" }],
    });
  });

  it("the reasoning item sent back (as Codex sends it: summary, content, encrypted_content) gives the provider its details as they were", () => {
    const answer = completion(
      {
        role: "assistant",
        content: null,
        reasoning: "Thinking",
        reasoning_details: REASONING_DETAILS,
        tool_calls: [
          {
            id: "call_a",
            type: "function",
            function: { name: "multi_agent_v1__close_agent", arguments: "{}" },
          },
        ],
      },
      "tool_calls",
    );
    const output = resultOf(answer).output as Json[];
    // What Codex keeps of each item (its ResponseItem fields): nothing else comes back.
    const keep = (o: Json, keys: string[]) =>
      Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
    const replay = [
      { role: "user", content: "close x" },
      keep(output[0] as Json, ["type", "summary", "content", "encrypted_content"]),
      keep(output[1] as Json, ["type", "name", "namespace", "arguments", "call_id"]),
      { type: "function_call_output", call_id: "call_a", output: "closed" },
    ];
    const chat = responsesToChat({ ...TOOLS_REQUEST, input: replay }).chat;
    expect(chat.messages[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_a",
          type: "function",
          function: { name: "multi_agent_v1__close_agent", arguments: "{}" },
        },
      ],
      reasoning_details: REASONING_DETAILS,
    });
  });
});
