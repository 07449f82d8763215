import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAnthropicAdapter } from "../../../src/gateway/providers/anthropic.js";
import {
  type ProviderAdapter,
  type ProviderChunk,
  type UpstreamCall,
} from "../../../src/gateway/providers/provider.js";
import { FAKE_ANTHROPIC_KEY, OK_TEXT, startFakeAnthropic } from "../../helpers/fake-upstreams/anthropic.js";
import type { FakeServer } from "../../helpers/fake-upstreams/fake-server.js";
import { upstreamFailure } from "../../helpers/fake-upstreams/upstream-failure.js";

interface ToolCallDelta {
  index: number;
  id?: string;
  function: { name?: string; arguments: string };
}

let fake: FakeServer;
let adapter: ProviderAdapter;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  // a trailing /v1 on the base URL is accepted
  adapter = createAnthropicAdapter({
    baseUrl: `${fake.url}/v1`,
    apiKey: FAKE_ANTHROPIC_KEY,
    idleTimeoutMs: 10_000,
  });
});
afterAll(async () => {
  await adapter.close?.();
  await fake.close();
});

const call = (model: string, body: Partial<UpstreamCall["body"]> = {}, timeoutMs = 10_000): UpstreamCall => ({
  upstreamModel: model,
  body: { messages: [{ role: "user", content: "Hi" }], ...body },
  timeoutMs,
  maxCompletionTokens: 8192,
});
const signal = (): AbortSignal => new AbortController().signal;
const lastRequest = () => fake.requests[fake.requests.length - 1]!;

async function collect(it: AsyncIterable<ProviderChunk>): Promise<ProviderChunk[]> {
  const out: ProviderChunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}

const USAGE = { promptTokens: 15, completionTokens: 6, cachedTokens: 3, reasoningTokens: 0 };

describe("Anthropic adapter: the request", () => {
  it("translates a full OpenAI conversation into a Messages request the API accepts", async () => {
    const png = "iVBORw0KGgo=";
    await adapter.complete(
      call("ok", {
        messages: [
          { role: "system", content: "Be brief." },
          {
            role: "user",
            content: [
              { type: "text", text: "What is this and the weather?" },
              { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
              { type: "image_url", image_url: { url: "https://example.com/a.jpg" } },
            ],
          },
          {
            role: "assistant",
            content: "Checking.",
            tool_calls: [
              {
                id: "t1",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Paris"}' },
              },
              { id: "t2", type: "function", function: { name: "get_time", arguments: "" } },
            ],
          },
          { role: "tool", tool_call_id: "t1", content: "18C" },
          { role: "tool", tool_call_id: "t2", content: [{ type: "text", text: "noon" }] },
          { role: "developer", content: "Answer in English." },
        ],
        tools: [
          {
            type: "function",
            function: {
              name: "get_weather",
              description: "Weather",
              parameters: { type: "object", properties: { city: { type: "string" } } },
            },
          },
          { type: "function", function: { name: "get_time" } },
        ],
        tool_choice: "required",
        parallel_tool_calls: false,
        max_tokens: 2000,
        stop: "END",
        temperature: 0.5,
        top_p: 0.9,
        user: "user-7",
        reasoning: { max_tokens: 1024 },
      }),
      signal(),
    );
    const req = lastRequest();
    expect(req.headers["x-api-key"]).toBe(FAKE_ANTHROPIC_KEY);
    expect(req.headers["anthropic-version"]).toBe("2023-06-01");
    expect(req.headers.authorization).toBeUndefined();
    expect(req.body).toEqual({
      model: "ok",
      max_tokens: 2000,
      stream: false,
      system: [
        { type: "text", text: "Be brief." },
        { type: "text", text: "Answer in English." },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this and the weather?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
            { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "t1", name: "get_weather", input: { city: "Paris" } },
            { type: "tool_use", id: "t2", name: "get_time", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "18C" },
            { type: "tool_result", tool_use_id: "t2", content: "noon" },
          ],
        },
      ],
      tools: [
        {
          name: "get_weather",
          description: "Weather",
          input_schema: { type: "object", properties: { city: { type: "string" } } },
        },
        { name: "get_time", input_schema: { type: "object", properties: {} } },
      ],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      stop_sequences: ["END"],
      temperature: 0.5,
      top_p: 0.9,
      metadata: { user_id: "user-7" },
      thinking: { type: "enabled", budget_tokens: 1024 },
    });
  });

  it("empty or blank system messages and text parts are left out (Anthropic refuses them)", async () => {
    await adapter.complete(
      call("ok", {
        messages: [
          { role: "system", content: "" },
          { role: "developer", content: [{ type: "text", text: " \n" }] },
          {
            role: "user",
            content: [
              { type: "text", text: "" },
              { type: "text", text: "Weather?" },
            ],
          },
          {
            role: "assistant",
            content: " ",
            tool_calls: [{ id: "t1", type: "function", function: { name: "get_weather", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "t1", content: "18C" },
        ],
      }),
      signal(),
    );
    const body = lastRequest().body;
    expect(body.system).toBeUndefined();
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather?" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "get_weather", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "18C" }] },
    ]);
  });

  it("max_tokens: max_completion_tokens first, then max_tokens, then the endpoint's maximum", async () => {
    await adapter.complete(call("ok", { max_completion_tokens: 50, max_tokens: 70 }), signal());
    expect(lastRequest().body.max_tokens).toBe(50);
    await adapter.complete(call("ok"), signal());
    expect(lastRequest().body.max_tokens).toBe(8192);
    expect(lastRequest().body.stop_sequences).toBeUndefined();
  });

  it("tool_choice: auto, none and a named function", async () => {
    const tools = [{ type: "function", function: { name: "f" } }];
    await adapter.complete(call("ok", { tools }), signal());
    expect(lastRequest().body.tool_choice).toEqual({ type: "auto" });
    await adapter.complete(call("ok", { tools, tool_choice: "none" }), signal());
    expect(lastRequest().body.tool_choice).toEqual({ type: "none" });
    await adapter.complete(
      call("ok", { tools, tool_choice: { type: "function", function: { name: "f" } } }),
      signal(),
    );
    expect(lastRequest().body.tool_choice).toEqual({ type: "tool", name: "f" });
  });

  it("what Anthropic cannot express is a 400 naming the field, and nothing is sent", async () => {
    const before = fake.requests.length;
    const cases: [Partial<UpstreamCall["body"]>, string][] = [
      [
        { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }] },
        "messages[0].content[0].type",
      ],
      [
        { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "ftp://x" } }] }] },
        "messages[0].content[0].image_url.url",
      ],
      [
        {
          messages: [
            {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: "[1]" } }],
            },
          ],
        },
        "messages[0].tool_calls[0].function.arguments",
      ],
      [{ messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id"],
      [{ messages: [{ role: "function", content: "x" }] }, "messages[0].role"],
      [{ tools: [{ type: "function", function: { name: "f" } }], tool_choice: 3 }, "tool_choice"],
    ];
    for (const [body, field] of cases) {
      const err = await upstreamFailure(adapter.complete(call("ok", body), signal()));
      expect(err).toMatchObject({ status: 400, retryable: false });
      expect(err.message.startsWith(`${field}: `)).toBe(true);
    }
    expect(fake.requests.length).toBe(before);
  });
});

describe("Anthropic adapter: the thinking budget", () => {
  it("a budget under Anthropic's 1024 is raised to it; one at or above max_tokens is refused, nothing sent", async () => {
    await adapter.complete(call("ok", { max_tokens: 4000, reasoning: { max_tokens: 300 } }), signal());
    expect(lastRequest().body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    await adapter.complete(call("ok", { max_tokens: 4000, reasoning: { max_tokens: 2000 } }), signal());
    expect(lastRequest().body.thinking).toEqual({ type: "enabled", budget_tokens: 2000 });
    const before = fake.requests.length;
    for (const body of [
      { max_tokens: 4000, reasoning: { max_tokens: 4000 } },
      { max_tokens: 1000, reasoning: { max_tokens: 300 } },
    ]) {
      const err = await upstreamFailure(adapter.complete(call("ok", body), signal()));
      expect(err).toMatchObject({ status: 400, retryable: false });
      expect(err.message).toMatch(/^reasoning\.max_tokens: .*below max_tokens \(\d+\)/);
    }
    expect(fake.requests.length).toBe(before);
  });
});

describe("Anthropic adapter: complete", () => {
  it("text, stop reason and usage (cache reads and writes count as prompt tokens)", async () => {
    expect(await adapter.complete(call("ok"), signal())).toEqual({
      upstreamId: "msg_fake",
      choices: [
        { index: 0, message: { role: "assistant", content: OK_TEXT.join("") }, finish_reason: "stop" },
      ],
      usage: USAGE,
    });
  });

  it("tool_use blocks become tool_calls with JSON string arguments", async () => {
    const res = await adapter.complete(call("tools"), signal());
    expect(res.choices[0]).toEqual({
      index: 0,
      message: {
        role: "assistant",
        content: "Let me check.",
        tool_calls: [
          {
            id: "toolu_01",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
        ],
      },
      finish_reason: "tool_calls",
    });
  });

  it("thinking becomes reasoning; max_tokens becomes length; no usage is null", async () => {
    expect((await adapter.complete(call("thinking"), signal())).choices[0]!.message.reasoning).toBe(
      "The user greets.",
    );
    expect((await adapter.complete(call("max-tokens"), signal())).choices[0]!.finish_reason).toBe("length");
    expect((await adapter.complete(call("no-usage"), signal())).usage).toBeNull();
  });

  it("upstream failures: 500 and 529 retryable, 429 with Retry-After, 401 not retryable", async () => {
    expect(await upstreamFailure(adapter.complete(call("error-500"), signal()))).toMatchObject({
      status: 500,
      retryable: true,
    });
    const overloaded = await upstreamFailure(adapter.complete(call("overloaded"), signal()));
    expect(overloaded).toMatchObject({ status: 529, retryable: true });
    expect(overloaded.message).toContain("Overloaded");
    expect(await upstreamFailure(adapter.complete(call("rate-limited"), signal()))).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 3_000,
    });
    const wrong = createAnthropicAdapter({ baseUrl: fake.url, apiKey: "sk-ant-wrong-secret" });
    const err = await upstreamFailure(wrong.complete(call("ok"), signal()));
    await wrong.close?.();
    expect(err).toMatchObject({ status: 401, retryable: false });
    expect(err.message).not.toContain("sk-ant-wrong-secret");
  });

  it("malformed JSON, a slow upstream and a dropped connection are retryable", async () => {
    expect(await upstreamFailure(adapter.complete(call("bad-json"), signal()))).toMatchObject({
      status: null,
      retryable: true,
    });
    expect(await upstreamFailure(adapter.complete(call("slow-headers", {}, 100), signal()))).toMatchObject({
      status: null,
      retryable: true,
    });
    expect(await upstreamFailure(adapter.complete(call("reset"), signal()))).toMatchObject({
      status: null,
      retryable: true,
    });
  });
});

describe("Anthropic adapter: stream", () => {
  it("text deltas, then the finish reason with the cumulative usage", async () => {
    const chunks = await collect(adapter.stream(call("ok"), signal()));
    expect(lastRequest().body.stream).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? null)).toEqual([...OK_TEXT, null]);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "Hello" });
    expect(chunks.every((c) => c.upstreamId === "msg_fake")).toBe(true);
    expect(chunks.at(-1)).toEqual({
      upstreamId: "msg_fake",
      choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
      usage: USAGE,
    });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it("tool_use streams as OpenAI tool_call deltas (id and name first, then argument pieces)", async () => {
    const chunks = await collect(adapter.stream(call("tools"), signal()));
    const calls = chunks.flatMap(
      (c) => (c.choices[0]?.delta.tool_calls as ToolCallDelta[] | undefined) ?? [],
    );
    expect(calls[0]).toEqual({
      index: 0,
      id: "toolu_01",
      type: "function",
      function: { name: "get_weather", arguments: "" },
    });
    expect(calls.map((t) => t.function.arguments).join("")).toBe('{"city": "Paris"}');
    expect(calls.every((t) => t.index === 0)).toBe(true);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("a tool called without arguments streams arguments {}, as the non-streamed answer has", async () => {
    const chunks = await collect(adapter.stream(call("tool-no-args"), signal()));
    const calls = chunks.flatMap(
      (c) => (c.choices[0]?.delta.tool_calls as ToolCallDelta[] | undefined) ?? [],
    );
    expect(calls[0]).toMatchObject({ index: 0, id: "toolu_02", function: { name: "get_time" } });
    expect(calls.map((t) => t.function.arguments).join("")).toBe("{}");
    const full = await adapter.complete(call("tool-no-args"), signal());
    expect(full.choices[0]!.message.tool_calls).toEqual([
      { id: "toolu_02", type: "function", function: { name: "get_time", arguments: "{}" } },
    ]);
  });

  it("null input and cache counts in message_delta keep message_start's usage", async () => {
    const chunks = await collect(adapter.stream(call("delta-usage-null"), signal()));
    expect(chunks.at(-1)!.usage).toEqual(USAGE);
  });

  it("thinking deltas become reasoning deltas; signatures are not forwarded", async () => {
    const chunks = await collect(adapter.stream(call("thinking"), signal()));
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", reasoning: "The user greets." });
    expect(chunks.some((c) => JSON.stringify(c).includes("sig"))).toBe(false);
  });

  it("a stream without usage ends with usage null", async () => {
    const chunks = await collect(adapter.stream(call("no-usage"), signal()));
    expect(chunks.every((c) => c.usage === null)).toBe(true);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
  });

  it("an error event before any output is retryable (529); after output it is not", async () => {
    expect(await upstreamFailure(collect(adapter.stream(call("stream-error"), signal())))).toMatchObject({
      status: 529,
      retryable: true,
    });
    const got: ProviderChunk[] = [];
    const err = await upstreamFailure(
      (async () => {
        for await (const c of adapter.stream(call("stream-error-late"), signal())) got.push(c);
      })(),
    );
    expect(got).toHaveLength(1);
    expect(err).toMatchObject({ status: 529, retryable: false });
  });

  it("HTTP failures throw from the first iteration", async () => {
    const it = adapter.stream(call("rate-limited"), signal())[Symbol.asyncIterator]();
    expect(await upstreamFailure(it.next())).toMatchObject({ status: 429, retryAfterMs: 3_000 });
    expect(await upstreamFailure(collect(adapter.stream(call("bad-json"), signal())))).toMatchObject({
      retryable: true,
    });
  });

  it("a connection reset mid-stream throws after the delta already yielded", async () => {
    const got: ProviderChunk[] = [];
    const err = await upstreamFailure(
      (async () => {
        for await (const c of adapter.stream(call("reset"), signal())) got.push(c);
      })(),
    );
    expect(got).toHaveLength(1);
    expect(err.status).toBeNull();
  });

  it("aborting the signal ends a stream that never ends, and the upstream sees its connection close", async () => {
    const ac = new AbortController();
    const it = adapter.stream(call("never-ends"), ac.signal)[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    const req = lastRequest();
    const pending = it.next();
    setTimeout(() => ac.abort(), 100);
    expect(await upstreamFailure(pending)).toMatchObject({ retryable: false });
    expect(await req.closed).toEqual({ aborted: true });
  });
});
