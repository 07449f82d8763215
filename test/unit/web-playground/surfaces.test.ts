import { describe, expect, it } from "vitest";
import { chatSurface } from "../../../web/src/lib/playground/chat-surface.js";
import { messagesSurface } from "../../../web/src/lib/playground/messages-surface.js";
import { responsesSurface } from "../../../web/src/lib/playground/responses-surface.js";
import type { SseEvent } from "../../../web/src/lib/playground/sse.js";
import {
  NO_ANSWER,
  StreamFailed,
  type Answer,
  type Surface,
} from "../../../web/src/lib/playground/surface.js";
import { errorMessage } from "../../../web/src/lib/playground/wire-json.js";

/**
 * Each surface's request building and answer reading on its own (web/src/lib/playground/): the
 * cases the server's encoders do not write but a surface's format allows.
 */
const ev = (event: string | null, data: unknown): SseEvent => ({
  event,
  data: typeof data === "string" ? data : JSON.stringify(data),
});
const fold = (s: Surface, events: SseEvent[]): Answer => events.reduce((a, e) => s.step(a, e), NO_ANSWER);
const oneTurn = { system: "", turns: [{ role: "user" as const, text: "Hi" }] };

describe("request building", () => {
  it("leaves out empty instructions on every surface", () => {
    expect(chatSurface.request(oneTurn, "m", false)).toEqual({
      model: "m",
      stream: false,
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(responsesSurface.request(oneTurn, "m", true)).toEqual({
      model: "m",
      stream: true,
      store: false,
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }] }],
    });
    expect(messagesSurface.request(oneTurn, "m", true)).toEqual({
      model: "m",
      max_tokens: 1024,
      stream: true,
      messages: [{ role: "user", content: "Hi" }],
    });
  });

  it("puts instructions where each surface takes them", () => {
    const c = { ...oneTurn, system: "Be brief." };
    expect(chatSurface.request(c, "m", false).messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
    ]);
    expect(responsesSurface.request(c, "m", false).instructions).toBe("Be brief.");
    expect(messagesSurface.request(c, "m", false).system).toBe("Be brief.");
  });

  it("sends Anthropic's version header on Messages only", () => {
    expect(messagesSurface.headers).toEqual({ "anthropic-version": "2023-06-01" });
    expect(chatSurface.headers).toEqual({});
    expect(responsesSurface.headers).toEqual({});
  });
});

describe("chat completions", () => {
  it("is done only at [DONE]; a chunk without usage keeps the earlier usage", () => {
    const a = fold(chatSurface, [
      ev(null, { choices: [{ delta: { content: "A" } }] }),
      ev(null, { choices: [], usage: { prompt_tokens: 5, completion_tokens: 1 } }),
      ev(null, { choices: [{ delta: { content: null } }] }),
    ]);
    expect(a).toEqual({ text: "A", usage: { prompt: 5, completion: 1, cost: null }, done: false });
    expect(chatSurface.step(a, ev(null, "[DONE]")).done).toBe(true);
  });

  it("refuses data that is not JSON, naming it", () => {
    expect(() => chatSurface.step(NO_ANSWER, ev(null, "{nope"))).toThrow(/not JSON: \{nope/);
  });
});

describe("Responses", () => {
  it("takes the text of refusal deltas too, and an incomplete response is a finished answer", () => {
    const a = fold(responsesSurface, [
      ev("response.created", { type: "response.created", response: { output: [] } }),
      ev("response.refusal.delta", { type: "response.refusal.delta", delta: "I can't" }),
      ev("response.incomplete", {
        type: "response.incomplete",
        response: {
          status: "incomplete",
          output: [{ type: "message", content: [{ type: "refusal", refusal: "I can't" }] }],
          usage: { input_tokens: 9, output_tokens: 2, cost: 0.01 },
        },
      }),
      ev(null, "[DONE]"),
    ]);
    expect(a).toEqual({ text: "I can't", usage: { prompt: 9, completion: 2, cost: 0.01 }, done: true });
  });

  it("is not done at [DONE] without a terminal event", () => {
    const a = fold(responsesSurface, [
      ev("response.output_text.delta", { type: "response.output_text.delta", delta: "x" }),
      ev(null, "[DONE]"),
    ]);
    expect(a.done).toBe(false);
  });

  it("throws the flat error event's message", () => {
    expect(() =>
      responsesSurface.step(
        NO_ANSWER,
        ev("error", { type: "error", code: null, message: "boom", param: null }),
      ),
    ).toThrow(new StreamFailed("boom", { ...NO_ANSWER, done: true }));
  });

  it("reads a whole response's message items when it has no output_text", () => {
    const a = responsesSurface.whole({
      output: [
        { type: "reasoning", summary: [] },
        {
          type: "message",
          content: [
            { type: "output_text", text: "Hel" },
            { type: "output_text", text: "lo" },
          ],
        },
      ],
    });
    expect(a).toEqual({ text: "Hello", usage: null, done: true });
  });
});

describe("Messages", () => {
  it("adds the cache classes to the prompt; a null count keeps the one known before", () => {
    const a = fold(messagesSurface, [
      ev("message_start", {
        type: "message_start",
        message: {
          usage: {
            input_tokens: 5,
            cache_read_input_tokens: 7,
            cache_creation_input_tokens: 3,
            output_tokens: 0,
          },
        },
      }),
      ev("ping", { type: "ping" }),
      ev("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "thinking_delta", thinking: "hm" },
      }),
      ev("content_block_delta", {
        type: "content_block_delta",
        index: 1,
        delta: { type: "text_delta", text: "Yes" },
      }),
      ev("message_delta", {
        type: "message_delta",
        delta: { stop_reason: "end_turn" },
        usage: { input_tokens: null, cache_read_input_tokens: null, output_tokens: 4, cost: 0.002 },
      }),
    ]);
    expect(a).toEqual({ text: "Yes", usage: { prompt: 15, completion: 4, cost: 0.002 }, done: false });
    expect(messagesSurface.step(a, ev("message_stop", { type: "message_stop" })).done).toBe(true);
  });

  it("goes by the data's type when an event has no name", () => {
    const a = messagesSurface.step(
      NO_ANSWER,
      ev(null, { type: "content_block_delta", delta: { type: "text_delta", text: "z" } }),
    );
    expect(a.text).toBe("z");
  });

  it("joins a whole Message's text blocks only", () => {
    const a = messagesSurface.whole({
      content: [
        { type: "thinking", thinking: "hm", signature: "" },
        { type: "text", text: "A" },
        { type: "tool_use", id: "t", name: "f", input: {} },
        { type: "text", text: "B" },
      ],
      usage: { input_tokens: 1, output_tokens: 2 },
    });
    expect(a).toEqual({ text: "AB", usage: { prompt: 1, completion: 2, cost: null }, done: true });
  });
});

describe("errorMessage", () => {
  it("reads the chat, Responses and Anthropic error envelopes", () => {
    expect(errorMessage({ error: { code: 401, message: "no key" } })).toBe("no key");
    expect(
      errorMessage({
        type: "error",
        error: { type: "authentication_error", message: "bad key" },
        request_id: null,
      }),
    ).toBe("bad key");
    expect(errorMessage("<html>")).toBeNull();
    expect(errorMessage({ error: "flat" })).toBeNull();
  });
});
