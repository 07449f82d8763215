import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnthropicStream } from "../../../src/gateway/providers/anthropic/anthropic-response.js";
import type { ProviderChunk } from "../../../src/gateway/providers/provider.js";
import { anthropicErrorBody } from "../../../src/gateway/surfaces/messages/messages-errors.js";
import { messagesToChat } from "../../../src/gateway/surfaces/messages/messages-request.js";
import { chatToMessage } from "../../../src/gateway/surfaces/messages/messages-response.js";
import { MessagesStreamEncoder } from "../../../src/gateway/surfaces/messages/messages-stream.js";

/**
 * The strongest check of the Messages translations: the official Anthropic client
 * (@anthropic-ai/sdk, the version pinned in package.json) reads what they produce, over a real
 * socket on 127.0.0.1. A small server answers POST /v1/messages with the encoder's events, a
 * Message from chatToMessage, or an error body, chosen by the request's model; it also runs the
 * client's request through messagesToChat, so the client's own wire form is translated too.
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
const chunk = (delta: Record<string, unknown>): ProviderChunk => ({
  upstreamId: null,
  usage: null,
  choices: [{ index: 0, delta, finish_reason: null }],
});

/** An Anthropic upstream's stream (thinking, text, a tool call) as the provider adapter yields it. */
function anthropicChunks(): ProviderChunk[] {
  const s = new AnthropicStream();
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
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "The user wants " } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "a listing." } },
    {
      type: "content_block_delta",
      index: 0,
      delta: { type: "signature_delta", signature: "EqQBCkgIARABGAIi" },
    },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "I'll list " } },
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "the files." } },
    { type: "content_block_stop", index: 1 },
    {
      type: "content_block_start",
      index: 2,
      content_block: { type: "tool_use", id: "toolu_01", name: "Bash", input: {} },
    },
    {
      type: "content_block_delta",
      index: 2,
      delta: { type: "input_json_delta", partial_json: '{"command": ' },
    },
    { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '"ls -la"}' } },
    { type: "content_block_stop", index: 2 },
    { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 20 } },
    { type: "message_stop" },
  ];
  return upstream.flatMap((ev) => {
    const c = s.next(ev);
    return c ? [c] : [];
  });
}

/** An OpenAI-compatible upstream's stream: reasoning text, then two tool calls. */
const openAiChunks = (): ProviderChunk[] => [
  chunk({ role: "assistant", reasoning: "Two calls." }),
  chunk({
    tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "ls", arguments: "" } }],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"/tmp"}' } }] }),
  chunk({
    tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "pwd", arguments: "{}" } }],
  }),
];

function sse(res: ServerResponse, text: string): void {
  res.writeHead(200, { "content-type": "text/event-stream", "request-id": "req_1" });
  // Written in small pieces, so that the client joins events split across reads.
  for (let i = 0; i < text.length; i += 37) res.write(text.slice(i, i + 37));
  res.end();
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** What the server got from the client, translated by messagesToChat. */
const translated: ReturnType<typeof messagesToChat>[] = [];

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let raw = "";
  for await (const piece of req) raw += String(piece);
  const body = JSON.parse(raw) as { model: string };
  translated.push(messagesToChat(body));
  const e = new MessagesStreamEncoder(head);
  switch (body.model) {
    case "stream-anthropic": {
      const chunks = anthropicChunks();
      let text = e.start(chunks[0]!.prompt);
      for (const c of chunks) text += e.chunk(c);
      return sse(res, text + e.end(usage, "tool_calls"));
    }
    case "stream-openai": {
      let text = e.start();
      for (const c of openAiChunks()) text += e.chunk(c);
      return sse(res, text + e.end(usage, "tool_calls"));
    }
    case "stream-fail":
      return sse(
        res,
        e.start() +
          e.chunk(chunk({ content: "Partial" })) +
          e.fail(502, "Upstream failed mid-stream", "provider_unavailable"),
      );
    case "whole":
      return json(
        res,
        200,
        chatToMessage({
          ...head,
          object: "chat.completion",
          created: 1795773012,
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: "Hello!",
                reasoning: "Greet.",
                reasoning_details: [
                  {
                    type: "reasoning.text",
                    text: "Greet.",
                    signature: "SIG",
                    format: "anthropic-claude-v1",
                    index: 0,
                  },
                ],
              },
              finish_reason: "stop",
            },
          ],
          usage,
        }),
      );
    case "refused-402":
      return json(res, 402, anthropicErrorBody(402, "Key limit reached", null, { scope: "key" }));
    case "refused-403":
      return json(
        res,
        403,
        anthropicErrorBody(403, "Workspace budget reached", null, { scope: "workspace" }),
      );
    default:
      return json(res, 404, anthropicErrorBody(404, "no such model", null));
  }
}

let server: Server;
let client: Anthropic;

beforeAll(async () => {
  server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  client = new Anthropic({ apiKey: "gh-test-key", baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const ask = { max_tokens: 1024, messages: [{ role: "user" as const, content: "List the files." }] };

describe("@anthropic-ai/sdk reads the Messages surface's answers", () => {
  it("stream from an Anthropic upstream: finalMessage has signed thinking, text, parsed tool input, usage", async () => {
    const stream = client.messages.stream({ ...ask, model: "stream-anthropic" });
    const texts: string[] = [];
    stream.on("text", (t) => texts.push(t));
    const final = await stream.finalMessage();
    expect(texts).toEqual(["I'll list ", "the files."]);
    expect(final.id).toBe(head.id);
    expect(final.model).toBe(head.model);
    expect(final.content).toEqual([
      { type: "thinking", thinking: "The user wants a listing.", signature: "EqQBCkgIARABGAIi" },
      { type: "text", text: "I'll list the files.", citations: null },
      { type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "ls -la" } },
    ]);
    expect(final.stop_reason).toBe("tool_use");
    expect(final.usage).toMatchObject({
      input_tokens: 70,
      cache_read_input_tokens: 30,
      cache_creation_input_tokens: 0,
      output_tokens: 20,
    });
  });

  it("stream from an OpenAI-style upstream: reasoning as thinking, two tool_use blocks", async () => {
    const final = await client.messages.stream({ ...ask, model: "stream-openai" }).finalMessage();
    expect(final.content).toEqual([
      { type: "thinking", thinking: "Two calls.", signature: "" },
      { type: "tool_use", id: "call_a", name: "ls", input: { path: "/tmp" } },
      { type: "tool_use", id: "call_b", name: "pwd", input: {} },
    ]);
    expect(final.stop_reason).toBe("tool_use");
    // message_start had no early count (0); message_delta's input counts replaced it.
    expect(final.usage.input_tokens).toBe(70);
  });

  it("the raw event stream: every event reaches the caller, in Anthropic's order", async () => {
    const stream = await client.messages.create({ ...ask, model: "stream-anthropic", stream: true });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    expect(types).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });

  it("an error event mid-stream is thrown as an APIError with its type", async () => {
    const stream = client.messages.stream({ ...ask, model: "stream-fail" });
    const err = await stream.finalMessage().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).type).toBe("api_error");
  });

  it("a whole answer: create() returns the Message", async () => {
    const m = await client.messages.create({ ...ask, model: "whole" });
    expect(m.content).toEqual([
      { type: "thinking", thinking: "Greet.", signature: "SIG" },
      { type: "text", text: "Hello!", citations: null },
    ]);
    expect(m.stop_reason).toBe("end_turn");
    expect(m.usage.input_tokens).toBe(70);
    expect(m.usage.output_tokens).toBe(20);
  });

  const refusals: [string, number, unknown, string][] = [
    ["refused-402", 402, Anthropic.APIError, "billing_error"],
    ["refused-403", 403, Anthropic.PermissionDeniedError, "permission_error"],
    ["unknown", 404, Anthropic.NotFoundError, "not_found_error"],
  ];
  for (const [model, status, cls, type] of refusals) {
    it(`an error body with status ${status}: the client's error class and type`, async () => {
      const err = await client.messages.create({ ...ask, model }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(cls);
      const api = err as InstanceType<typeof Anthropic.APIError>;
      expect(api.status).toBe(status);
      expect(api.type).toBe(type);
    });
  }

  it("the client's own requests translate", () => {
    expect(translated.length).toBeGreaterThan(0);
    for (const t of translated) {
      expect(t.chat.max_tokens).toBe(1024);
      expect(t.chat.messages).toEqual([{ role: "user", content: "List the files." }]);
    }
  });
});
