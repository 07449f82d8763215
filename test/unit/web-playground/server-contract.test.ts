import { describe, expect, it } from "vitest";
import { chatStream, type StreamEncoderFor } from "../../../src/gateway/chat/stream-encoder.js";
import type { Answer as ServerAnswer } from "../../../src/gateway/chat/complete.js";
import type { ProviderChunk } from "../../../src/gateway/providers/provider.js";
import { messagesRequest } from "../../../src/gateway/surfaces/messages/messages-surface.js";
import { responsesRequest } from "../../../src/gateway/surfaces/responses/responses-surface.js";
import { SURFACES } from "../../../web/src/lib/playground/send.js";
import { splitSse } from "../../../web/src/lib/playground/sse.js";
import {
  NO_ANSWER,
  StreamFailed,
  type Answer,
  type Conversation,
  type PlaygroundApi,
  type Surface,
} from "../../../web/src/lib/playground/surface.js";

/**
 * The Playground's request builders and answer readers (web/src/lib/playground/) against the
 * server's own surface translations and encoders: what the dashboard sends is the same chat
 * request through every surface, and what the server writes, whole or streamed, reads back as the
 * same answer and usage.
 */
const conversation: Conversation = {
  system: "Be brief.",
  turns: [
    { role: "user", text: "Hi" },
    { role: "assistant", text: "Hello!" },
    { role: "user", text: "Say it again" },
  ],
};

/** A chat usage object as the gateway writes it (usageWire). */
const usage = {
  prompt_tokens: 40,
  completion_tokens: 3,
  total_tokens: 43,
  prompt_tokens_details: { cached_tokens: 10 },
  completion_tokens_details: { reasoning_tokens: 0 },
  cost: 0.00042,
  is_byok: false,
  cost_details: { upstream_inference_prompt_cost: 0.0003, upstream_inference_completions_cost: 0.00012 },
};

/** Per surface: the chat request the server runs for the body, its stream encoder and whole answer. */
const server: Record<
  PlaygroundApi,
  (body: Record<string, unknown>) => {
    chat: Record<string, unknown>;
    encoderFor: StreamEncoderFor;
    answer: (a: ServerAnswer) => ServerAnswer;
  }
> = {
  chat: (body) => ({ chat: body, encoderFor: chatStream, answer: (a) => a }),
  responses: (body) => {
    const r = responsesRequest(body, () => 1_800_000_001);
    return { chat: r.body, encoderFor: r.encoderFor, answer: r.answer };
  },
  messages: (body) => {
    const r = messagesRequest(body);
    return { chat: r.body, encoderFor: r.encoderFor, answer: r.answer };
  },
};

const head = { id: "gen-1800000000-abc", created: 1_800_000_000, model: "mock/echo", provider: "Mock" };
const chunk = (content: string, finish: string | null = null): ProviderChunk => ({
  upstreamId: null,
  usage: null,
  choices: [{ index: 0, delta: { content }, finish_reason: finish }],
});

/** The SSE text a surface's encoder writes for `pieces`, then its end (or its failure). */
function streamText(api: PlaygroundApi, pieces: string[], fail?: { status: number; message: string }) {
  const s = server[api](SURFACES[api].request(conversation, "mock/echo", true));
  const enc = s.encoderFor(head);
  let text = enc.open();
  for (const p of pieces) text += enc.chunk(chunk(p));
  text += fail
    ? enc.fail(fail.status, fail.message, "provider_unavailable", usage)
    : enc.finish(usage, "stop");
  return text + enc.done;
}

/** Reads SSE text through a surface, in reads of `size` characters (events split across reads). */
function read(surface: Surface, text: string, size = 7): Answer {
  let answer = NO_ANSWER;
  let rest = "";
  for (let i = 0; i < text.length; i += size) {
    const split = splitSse(rest + text.slice(i, i + size));
    rest = split.rest;
    for (const ev of split.events) answer = surface.step(answer, ev);
  }
  return answer;
}

const APIS: PlaygroundApi[] = ["chat", "responses", "messages"];
const expectedUsage = { prompt: 40, completion: 3, cost: 0.00042 };

describe("the Playground against the server's surfaces", () => {
  it("sends the same conversation through every surface (the chat request the server runs)", () => {
    const runs = APIS.map((api) => {
      const { chat } = server[api](SURFACES[api].request(conversation, "mock/echo", false));
      return { model: chat.model, stream: chat.stream ?? false, messages: chat.messages };
    });
    expect(runs[0]).toEqual({
      model: "mock/echo",
      stream: false,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello!" },
        { role: "user", content: "Say it again" },
      ],
    });
    for (const run of runs.slice(1)) {
      // Responses and Messages may send a content list where chat sends a string: the same text.
      const flat = (run.messages as { role: string; content: unknown }[]).map((m) => ({
        role: m.role,
        content: Array.isArray(m.content)
          ? (m.content as { text: string }[]).map((p) => p.text).join("")
          : m.content,
      }));
      expect({ ...run, messages: flat }).toEqual(runs[0]);
    }
  });

  it("asks for a stream on every surface when streaming, and Responses never stores", () => {
    for (const api of APIS) {
      const { chat } = server[api](SURFACES[api].request(conversation, "mock/echo", true));
      expect(chat.stream, api).toBe(true);
    }
    expect(SURFACES.responses.request(conversation, "m", false).store).toBe(false);
    expect(SURFACES.messages.request(conversation, "m", false).max_tokens).toBe(1024);
  });

  it.each(APIS)("%s: reads the streamed answer and its usage and cost, whatever the read sizes", (api) => {
    const text = streamText(api, ["Echo", ": Say", " it again"]);
    for (const size of [1, 7, 64, text.length]) {
      expect(read(SURFACES[api], text, size), `reads of ${size}`).toEqual({
        text: "Echo: Say it again",
        usage: expectedUsage,
        done: true,
      });
    }
  });

  it.each(APIS)("%s: reads the whole answer and its usage and cost", (api) => {
    const completion = {
      id: head.id,
      object: "chat.completion",
      created: head.created,
      model: "mock/echo",
      provider: "Mock",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Echo: Say it again" },
          finish_reason: "stop",
        },
      ],
      usage,
    };
    const s = server[api](SURFACES[api].request(conversation, "mock/echo", false));
    const body = s.answer({ headers: {}, body: completion }).body;
    expect(SURFACES[api].whole(JSON.parse(JSON.stringify(body)))).toEqual({
      text: "Echo: Say it again",
      usage: expectedUsage,
      done: true,
    });
  });

  it.each(APIS)("%s: a stream that fails after opening throws its message, with the text so far", (api) => {
    const text = streamText(api, ["Echo", ": Say"], { status: 502, message: "the upstream broke" });
    let failure: unknown = null;
    try {
      read(SURFACES[api], text);
    } catch (e) {
      failure = e;
    }
    expect(failure).toBeInstanceOf(StreamFailed);
    const f = failure as StreamFailed;
    expect(f.message).toBe("the upstream broke");
    expect(f.answer.text).toBe("Echo: Say");
    // Chat and Responses report the usage charged for the partial answer; Anthropic's error event has none.
    if (api !== "messages") expect(f.answer.usage).toEqual(expectedUsage);
  });
});
