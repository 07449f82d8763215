import { HTTPClient, OpenRouter } from "@openrouter/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import type { ProviderChunk } from "../../../src/gateway/providers/provider.js";
import { responsesToChat } from "../../../src/gateway/surfaces/responses/responses-request.js";
import {
  chatToResponse,
  type ChatCompletionAnswer,
} from "../../../src/gateway/surfaces/responses/responses-result.js";
import { ResponsesStreamEncoder } from "../../../src/gateway/surfaces/responses/responses-stream.js";
import "../../helpers/sdk-strict.js";
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
  streamOf,
} from "./responses-answers.js";

/**
 * The strongest check of the Responses surface's bytes: the real clients read them. The `openai`
 * package (`responses.create`, whole and streamed, and `responses.stream()` with its snapshot
 * accumulator, which throws on any event out of place) and the official OpenRouter SDK
 * (`responses.send`, whose schemas turn anything they cannot read into a silent "UNKNOWN") are
 * given a fake fetch that answers what the translation makes of their own request: the request
 * each client sends goes through responsesToChat, and its echo into the answer.
 */

type Json = Record<string, unknown>;

interface Answer {
  whole: ChatCompletionAnswer;
  chunks: ProviderChunk[];
  /** The stream's end other than finish(): a failure. */
  failAfter?: number;
}

/** A fetch that answers POST /api/v1/responses with `answer`, keeping the request bodies it saw. */
function fakeFetch(answer: Answer, seen: Json[]) {
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const req = input instanceof Request ? input : new Request(input, init);
    expect(req.method).toBe("POST");
    expect(new URL(req.url).pathname).toBe("/api/v1/responses");
    const body = (await req.json()) as Json;
    seen.push(body);
    const { echo } = responsesToChat(body); // throws (fails the test) on anything it refuses
    if (body.stream !== true) {
      return Response.json(
        chatToResponse(answer.whole, echo, { createdAt: CREATED, completedAt: COMPLETED }),
      );
    }
    let sse: string;
    if (answer.failAfter === undefined) sse = streamOf(answer.chunks, body);
    else {
      const enc = new ResponsesStreamEncoder({ id: ID, model: MODEL, createdAt: CREATED, echo });
      sse =
        enc.open() +
        answer.chunks
          .slice(0, answer.failAfter)
          .map((c) => enc.chunk(c))
          .join("");
      sse +=
        enc.fail(502, "Upstream provider failed mid-stream: reset", "provider_unavailable", USAGE) + enc.done;
    }
    return new Response(sse, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

const BASE = "http://127.0.0.1:9/api/v1";
const TEXT: Answer = { whole: TEXT_ANSWER, chunks: TEXT_CHUNKS };
const REASONING: Answer = { whole: REASONING_ANSWER, chunks: REASONING_CHUNKS };
const CALL: Answer = { whole: CALL_ANSWER, chunks: CALL_CHUNKS };

function openai(answer: Answer, seen: Json[] = []): OpenAI {
  return new OpenAI({ apiKey: "k", baseURL: BASE, maxRetries: 0, fetch: fakeFetch(answer, seen) });
}

function openrouter(answer: Answer, seen: Json[] = []): OpenRouter {
  return new OpenRouter({
    apiKey: "k",
    serverURL: BASE,
    retryConfig: { strategy: "none" },
    httpClient: new HTTPClient({ fetcher: fakeFetch(answer, seen) }),
  });
}

/** Where the SDK gave up on a value and made it "UNKNOWN" (its forward-compatible unions do that silently). */
function unknowns(v: unknown, path = "$"): string[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => unknowns(x, `${path}[${i}]`));
  if (typeof v !== "object" || v === null) return [];
  const o = v as Json;
  if (o.isUnknown === true || o.type === "UNKNOWN") return [path];
  return Object.entries(o).flatMap(([k, x]) => unknowns(x, `${path}.${k}`));
}

// The request as the openai package types it; the namespace tool is in its types, the rest as sent.
const toolsParams = TOOLS_REQUEST as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;

describe("the openai package reads the Responses surface", () => {
  it("responses.create: text; output_text, usage and the echo as the client types them", async () => {
    const seen: Json[] = [];
    const r = await openai(TEXT, seen).responses.create({
      model: MODEL,
      input: "Hi",
      instructions: "Be brief",
    });
    expect(seen[0]).toMatchObject({ model: MODEL, input: "Hi", instructions: "Be brief" });
    expect(r.id).toBe(ID);
    expect(r.status).toBe("completed");
    expect(r.output_text).toBe("Hello");
    expect(r.instructions).toBe("Be brief");
    expect(r.usage).toMatchObject({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 2 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 1 },
      total_tokens: 15,
    });
  });

  it("responses.create: a namespaced function call comes back under its name and namespace", async () => {
    const r = await openai(CALL).responses.create(toolsParams);
    expect(r.output).toEqual([
      expect.objectContaining({
        type: "function_call",
        call_id: "call_a",
        name: "close_agent",
        namespace: "multi_agent_v1",
        arguments: '{"target":"x"}',
      }),
    ]);
  });

  it("responses.create with stream: true yields every event, in order, without an error", async () => {
    const stream = await openai(REASONING).responses.create({ model: MODEL, input: "Hi", stream: true });
    const types: string[] = [];
    let last: OpenAI.Responses.ResponseStreamEvent | null = null;
    for await (const e of stream) {
      types.push(e.type);
      last = e;
    }
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.reasoning_text.delta");
    expect(last?.type).toBe("response.completed");
    if (last?.type === "response.completed") expect(last.response.usage?.total_tokens).toBe(15);
  });

  const streamed: [string, Answer, (r: OpenAI.Responses.Response) => void][] = [
    ["text", TEXT, (r) => expect(r.output_text).toBe("Hello")],
    [
      "reasoning then text",
      REASONING,
      (r) => {
        expect(r.output_text).toBe("Answer");
        const rs = r.output[0];
        expect(rs?.type).toBe("reasoning");
        if (rs?.type === "reasoning")
          expect(rs.content).toEqual([{ type: "reasoning_text", text: "Thinking" }]);
      },
    ],
    [
      "a function call",
      CALL,
      (r) =>
        expect(r.output[0]).toMatchObject({
          type: "function_call",
          name: "close_agent",
          arguments: '{"target":"x"}',
        }),
    ],
  ];
  it.each(streamed)(
    "responses.stream() + finalResponse(): %s, the snapshot accumulated event by event",
    async (_n, answer, check) => {
      const texts: string[] = [];
      const stream = openai(answer).responses.stream({
        ...toolsParams,
        stream: true,
      } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming);
      stream.on("response.output_text.delta", (e) => texts.push(e.snapshot));
      const r = await stream.finalResponse();
      expect(r.status).toBe("completed");
      expect(r.usage?.output_tokens).toBe(5);
      check(r);
      if (r.output_text !== "") expect(texts.at(-1)).toBe(r.output_text);
    },
  );

  it("a stream that fails after it opened: response.failed reaches the caller, with its error", async () => {
    const stream = await openai({ ...TEXT, failAfter: 2 }).responses.create({
      model: MODEL,
      input: "Hi",
      stream: true,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const last = events.at(-1);
    expect(last?.type).toBe("response.failed");
    if (last?.type === "response.failed") {
      expect(last.response.status).toBe("failed");
      expect(last.response.error).toEqual({
        code: "server_error",
        message: "Upstream provider failed mid-stream: reset",
      });
    }
  });
});

describe("the OpenRouter SDK reads the Responses surface", () => {
  it("responses.send: the result object parses with nothing unknown; usage and cost details read", async () => {
    const seen: Json[] = [];
    const r = await openrouter(REASONING, seen).responses.send({
      responsesRequest: { model: MODEL, input: "Hi", maxOutputTokens: 50 },
    });
    // What the SDK always sends passes the translation: store false, service_tier auto.
    expect(seen[0]).toMatchObject({ store: false, service_tier: "auto", max_output_tokens: 50 });
    expect(responsesToChat(seen[0]).leftOut).toEqual(["service_tier"]);
    expect(unknowns(r)).toEqual([]);
    if (!("output" in r)) throw new Error("expected a whole result");
    expect(r.status).toBe("completed");
    expect(r.outputText).toBe("Answer");
    expect(r.maxOutputTokens).toBe(50);
    expect(r.output.map((o) => o.type)).toEqual(["reasoning", "message"]);
    expect(r.output[0]).toMatchObject({
      type: "reasoning",
      signature: "sig-1",
      format: "anthropic-claude-v1",
    });
    expect(r.usage).toMatchObject({
      inputTokens: 10,
      inputTokensDetails: { cachedTokens: 2 },
      outputTokens: 5,
      outputTokensDetails: { reasoningTokens: 1 },
      totalTokens: 15,
      cost: 0.000035,
      isByok: false,
      costDetails: { upstreamInferenceInputCost: 0.00001, upstreamInferenceOutputCost: 0.000025 },
    });
  });

  it("responses.send: a function call, with the request's tools echoed (the hosted one included)", async () => {
    const seen: Json[] = [];
    const tools = [
      { type: "function" as const, name: "exec_command", parameters: { type: "object" }, description: "Run" },
      { type: "web_search" as const },
    ];
    const r = await openrouter(CALL, seen).responses.send({
      responsesRequest: { model: MODEL, input: "Hi", tools },
    });
    expect(unknowns(r)).toEqual([]);
    if (!("output" in r)) throw new Error("expected a whole result");
    expect(r.tools.map((t) => t.type)).toEqual(["function", "web_search"]);
    // The answer's call names a function of a namespace this request did not offer: passed as named.
    expect(r.output[0]).toMatchObject({
      type: "function_call",
      callId: "call_a",
      name: "multi_agent_v1__close_agent",
      arguments: '{"target":"x"}',
    });
  });

  const streams: [string, Answer, string][] = [
    ["text", TEXT, "response.completed"],
    ["reasoning then text", REASONING, "response.completed"],
    ["a function call", CALL, "response.completed"],
    ["a failure", { ...TEXT, failAfter: 2 }, "response.failed"],
  ];
  it.each(streams)(
    "responses.send with stream: %s, every event known to the SDK, sequence numbers in order",
    async (_n, answer, terminal) => {
      const r = await openrouter(answer).responses.send({
        responsesRequest: { model: MODEL, input: "Hi", stream: true },
      });
      if ("output" in r) throw new Error("expected a stream");
      const events: Json[] = [];
      for await (const e of r) events.push(e);
      expect(unknowns(events)).toEqual([]);
      expect(events.map((e) => e.sequenceNumber)).toEqual(events.map((_e, i) => i));
      expect(events[0]?.type).toBe("response.created");
      const last = events.at(-1);
      expect(last?.type).toBe(terminal);
      expect((last?.response as Json).usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });
    },
  );
});
