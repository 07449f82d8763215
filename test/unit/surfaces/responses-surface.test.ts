import { describe, expect, it } from "vitest";
import { DomainError } from "../../../src/domain/errors.js";
import { responsesRequest } from "../../../src/gateway/surfaces/responses/responses-surface.js";
import {
  CALL_CHUNKS,
  COMPLETED,
  CREATED,
  ID,
  MODEL,
  TEXT_ANSWER,
  TOOLS_REQUEST,
  USAGE,
  eventsOf,
} from "./responses-answers.js";

/**
 * What the route hands the data plane for POST /responses (responses-surface.ts): the chat body,
 * whether to stream, the left-out header, the stream encoder and the whole answer's translation.
 */
describe("responsesRequest", () => {
  it("a whole answer: the chat body, the left-out header, the chat completion turned into the result object", () => {
    const r = responsesRequest({ ...TOOLS_REQUEST, service_tier: "auto" }, () => COMPLETED);
    expect(r.stream).toBe(false);
    expect(r.body.messages).toEqual([{ role: "user", content: "List the agents" }]);
    expect(r.headers).toEqual({ "x-gatehouse-left-out": "service_tier, tools[web_search]" });
    const headers = { "x-gatehouse-generation-id": ID };
    const answer = r.answer({
      headers,
      body: { ...TEXT_ANSWER, object: "chat.completion", created: CREATED },
    });
    expect(answer.headers).toBe(headers);
    expect(answer.body).toMatchObject({
      id: ID,
      object: "response",
      created_at: CREATED,
      completed_at: COMPLETED,
      output_text: "Hello",
      tools: TOOLS_REQUEST.tools,
    });
  });

  it("a stream: its encoder, which names the namespaced call back", () => {
    const r = responsesRequest({ ...TOOLS_REQUEST, stream: true }, () => COMPLETED);
    expect(r.stream).toBe(true);
    expect(r.body.stream).toBe(true);
    const enc = r.encoderFor({ id: ID, created: CREATED, model: MODEL, provider: "Local" });
    let sse = enc.open();
    for (const c of CALL_CHUNKS) sse += enc.chunk(c);
    const events = eventsOf(sse + enc.finish(USAGE, "tool_calls") + enc.done);
    expect(events.at(-1)?.data.response).toMatchObject({
      completed_at: COMPLETED,
      output: [{ type: "function_call", name: "close_agent", namespace: "multi_agent_v1" }],
    });
  });

  it("nothing left out: no header", () => {
    expect(responsesRequest({ model: MODEL, input: "x", store: false }).headers).toEqual({});
  });

  it("a refused request throws the 400 before anything is served", () => {
    expect(() => responsesRequest({ input: "x", store: true })).toThrow(DomainError);
  });
});
