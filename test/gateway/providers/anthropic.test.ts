import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAnthropicAdapter } from "../../../src/gateway/providers/anthropic/anthropic.js";
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

const USAGE = {
  promptTokens: 15,
  completionTokens: 6,
  cachedTokens: 3,
  cacheWriteTokens: 2,
  reasoningTokens: 0,
};
const FORMAT = "anthropic-claude-v1";

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
            reasoning_details: [
              { type: "reasoning.text", text: "Weather needed.", signature: "s1", format: FORMAT, index: 0 },
            ],
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
        tool_choice: "auto",
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
            { type: "thinking", thinking: "Weather needed.", signature: "s1" },
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
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      stop_sequences: ["END"],
      // Thinking is on: no temperature, top_p at least 0.95 (Anthropic's rules; below).
      top_p: 0.95,
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
    await adapter.complete(call("ok", { tools, tool_choice: "required" }), signal());
    expect(lastRequest().body.tool_choice).toEqual({ type: "any" });
  });

  it("a tool schema without a type (OpenAI takes `parameters: {}`) is sent as type object, which Anthropic requires", async () => {
    await adapter.complete(
      call("ok", {
        tools: [
          { type: "function", function: { name: "now", parameters: {} } },
          {
            type: "function",
            function: { name: "f", parameters: { properties: { a: { type: "string" } }, required: ["a"] } },
          },
        ],
      }),
      signal(),
    );
    expect(lastRequest().body.tools).toEqual([
      { name: "now", input_schema: { type: "object" } },
      {
        name: "f",
        input_schema: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
      },
    ]);
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
      // Arguments as an object, not JSON text: refused, not sent as {} (they were dropped).
      [
        {
          messages: [
            {
              role: "assistant",
              content: null,
              tool_calls: [
                { id: "a", type: "function", function: { name: "f", arguments: { city: "Paris" } } },
              ],
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

describe("Anthropic adapter: sampling as Anthropic takes it", () => {
  const sent = async (body: Record<string, unknown>): Promise<Record<string, unknown>> => {
    await adapter.complete(call("ok", body), signal());
    return lastRequest().body as Record<string, unknown>;
  };

  it("temperature runs 0-1 at Anthropic: a higher one (OpenAI's range is 0-2) is sent as 1", async () => {
    expect((await sent({ temperature: 1.7 })).temperature).toBe(1);
    expect((await sent({ temperature: 0.3, top_p: 0.5, top_k: 40 })).temperature).toBe(0.3);
    expect(lastRequest().body).toMatchObject({ top_p: 0.5, top_k: 40 });
  });

  it("with thinking on: no temperature or top_k, top_p at least 0.95; the API accepts it", async () => {
    const body = await sent({
      max_tokens: 4000,
      reasoning: { effort: "low" },
      temperature: 0.2,
      top_k: 5,
      top_p: 0.5,
    });
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(body).not.toHaveProperty("temperature");
    expect(body).not.toHaveProperty("top_k");
    expect(body.top_p).toBe(0.95);
    expect((await sent({ max_tokens: 4000, reasoning: { effort: "low" }, top_p: 0.98 })).top_p).toBe(0.98);
  });

  it("a forced tool call with thinking on is a 400 naming tool_choice, nothing sent; auto is sent", async () => {
    const tools = [{ type: "function", function: { name: "f" } }];
    const before = fake.requests.length;
    for (const tool_choice of ["required", { type: "function", function: { name: "f" } }]) {
      const err = await upstreamFailure(
        adapter.complete(
          call("ok", { max_tokens: 4000, reasoning: { effort: "low" }, tools, tool_choice }),
          signal(),
        ),
      );
      expect(err).toMatchObject({ status: 400, retryable: false });
      expect(err.message).toMatch(/^tool_choice: .*thinking/);
    }
    expect(fake.requests.length).toBe(before);
    const body = await sent({ max_tokens: 4000, reasoning: { effort: "low" }, tools, tool_choice: "auto" });
    expect(body.tool_choice).toEqual({ type: "auto" });
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
    const thinking = (await adapter.complete(call("thinking"), signal())).choices[0]!.message;
    expect(thinking.reasoning).toBe("The user greets.");
    expect(thinking.reasoning_details).toEqual([
      { type: "reasoning.text", text: "The user greets.", signature: "sig", format: FORMAT, index: 0 },
    ]);
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

  it("thinking tokens (usage.output_tokens_details.thinking_tokens) are the reasoning tokens, whole or streamed", async () => {
    const thinkingUsage = { ...USAGE, reasoningTokens: 4 };
    expect((await adapter.complete(call("thinking"), signal())).usage).toEqual(thinkingUsage);
    expect((await collect(adapter.stream(call("thinking"), signal()))).at(-1)!.usage).toEqual(thinkingUsage);
  });

  it("thinking deltas become reasoning and reasoning_details deltas; the signature follows in its own", async () => {
    const chunks = await collect(adapter.stream(call("thinking"), signal()));
    expect(chunks[0]!.choices[0]!.delta).toEqual({
      role: "assistant",
      reasoning: "The user greets.",
      reasoning_details: [{ type: "reasoning.text", text: "The user greets.", format: FORMAT, index: 0 }],
    });
    expect(chunks[1]!.choices[0]!.delta).toEqual({
      reasoning_details: [{ type: "reasoning.text", signature: "sig", format: FORMAT, index: 0 }],
    });
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

describe("Anthropic adapter: thinking with tools over several turns (reasoning_details)", () => {
  const question = { role: "user", content: "Weather in Paris?" };
  const result = { role: "tool", tool_call_id: "toolu_03", content: "18C" };
  const THINKING_TOOLS_DETAILS = [
    { type: "reasoning.text", text: "I need the weather.", signature: "sig-tools", format: FORMAT, index: 0 },
    { type: "reasoning.encrypted", data: "enc-1", format: FORMAT, index: 1 },
  ];
  const THINKING_BLOCKS = [
    { type: "thinking", thinking: "I need the weather.", signature: "sig-tools" },
    { type: "redacted_thinking", data: "enc-1" },
  ];
  const turn2 = (assistant: Record<string, unknown>) =>
    call("ok", {
      max_tokens: 4000,
      reasoning: { max_tokens: 2000 },
      messages: [question, assistant, result],
    });

  it("an answer's signed and redacted thinking go back as the blocks they were; without them Anthropic refuses", async () => {
    const first = await adapter.complete(
      call("thinking-tools", { max_tokens: 4000, reasoning: { max_tokens: 2000 }, messages: [question] }),
      signal(),
    );
    const m = first.choices[0]!.message;
    expect(m.reasoning_details).toEqual(THINKING_TOOLS_DETAILS);
    expect(m.reasoning).toBe("I need the weather.");
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");

    // The client's next turn: the assistant message as it came, plus the tool's result.
    await adapter.complete(turn2({ ...m }), signal());
    expect(lastRequest().body.messages[1]).toEqual({
      role: "assistant",
      content: [
        ...THINKING_BLOCKS,
        { type: "tool_use", id: "toolu_03", name: "get_weather", input: { city: "Paris" } },
      ],
    });

    // Without them (what the OpenAI shape alone carries), the API refuses the turn.
    const { reasoning_details: _dropped, ...bare } = m;
    const err = await upstreamFailure(adapter.complete(turn2({ ...bare }), signal()));
    expect(err).toMatchObject({ status: 400, retryable: false });
    expect(err.message).toContain("must start with a thinking block");
  });

  it("a stream's pieces, sent back as they came, are joined per index into the same blocks", async () => {
    const chunks = await collect(
      adapter.stream(
        call("thinking-tools", { max_tokens: 4000, reasoning: { max_tokens: 2000 }, messages: [question] }),
        signal(),
      ),
    );
    const pieces = chunks.flatMap((c) => (c.choices[0]?.delta.reasoning_details as unknown[]) ?? []);
    expect(pieces).toEqual([
      { type: "reasoning.text", text: "I need the weather.", format: FORMAT, index: 0 },
      { type: "reasoning.text", signature: "sig-tools", format: FORMAT, index: 0 },
      { type: "reasoning.encrypted", data: "enc-1", format: FORMAT, index: 1 },
    ]);
    await adapter.complete(
      turn2({
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "toolu_03",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
        ],
        reasoning_details: [
          ...pieces,
          // Another provider's encrypted reasoning and an unsigned text cannot go to Anthropic.
          { type: "reasoning.encrypted", data: "gAAAA", format: "openai-responses-v1", index: 2 },
          { type: "reasoning.text", text: "unsigned", format: FORMAT, index: 3 },
        ],
      }),
      signal(),
    );
    expect(lastRequest().body.messages[1].content).toEqual([
      ...THINKING_BLOCKS,
      { type: "tool_use", id: "toolu_03", name: "get_weather", input: { city: "Paris" } },
    ]);
  });

  it("reasoning_details that are not a list are refused naming the field, nothing sent", async () => {
    const before = fake.requests.length;
    const err = await upstreamFailure(
      adapter.complete(turn2({ role: "assistant", content: "x", reasoning_details: "sig" }), signal()),
    );
    expect(err).toMatchObject({ status: 400, retryable: false });
    expect(err.message).toBe("messages[1].reasoning_details: must be a list");
    expect(fake.requests.length).toBe(before);
  });
});

describe("Anthropic adapter: reasoning effort", () => {
  const thinkingFor = async (body: Record<string, unknown>): Promise<unknown> => {
    await adapter.complete(call("ok", body), signal());
    return (lastRequest().body as { thinking?: unknown }).thinking;
  };

  it("an effort is that share of max_tokens, between 1024 and 32000; enabled alone is medium", async () => {
    const budget = (n: number) => ({ type: "enabled", budget_tokens: n });
    expect(await thinkingFor({ max_tokens: 10_000, reasoning: { effort: "max" } })).toEqual(budget(9500));
    expect(await thinkingFor({ max_tokens: 10_000, reasoning: { effort: "xhigh" } })).toEqual(budget(9000));
    expect(await thinkingFor({ max_tokens: 10_000, reasoning: { effort: "high" } })).toEqual(budget(8000));
    expect(await thinkingFor({ max_tokens: 10_000, reasoning: { effort: "medium" } })).toEqual(budget(5000));
    expect(await thinkingFor({ max_tokens: 10_000, reasoning: { effort: "low" } })).toEqual(budget(2000));
    expect(await thinkingFor({ max_tokens: 10_000, reasoning: { effort: "minimal" } })).toEqual(budget(1024));
    expect(await thinkingFor({ max_tokens: 10_000, reasoning: { enabled: true } })).toEqual(budget(5000));
    expect(await thinkingFor({ max_tokens: 100_000, reasoning: { effort: "high" } })).toEqual(budget(32_000));
    // OpenAI's top-level reasoning_effort reads the same.
    expect(await thinkingFor({ max_tokens: 10_000, reasoning_effort: "low" })).toEqual(budget(2000));
    // An explicit budget wins over an effort.
    expect(await thinkingFor({ max_tokens: 10_000, reasoning: { effort: "low", max_tokens: 3000 } })).toEqual(
      budget(3000),
    );
  });

  it("none, or enabled false, asks for no thinking", async () => {
    expect(await thinkingFor({ max_tokens: 10_000, reasoning: { effort: "none" } })).toBeUndefined();
    expect(
      await thinkingFor({ max_tokens: 10_000, reasoning: { enabled: false, effort: "high" } }),
    ).toBeUndefined();
    expect(await thinkingFor({ max_tokens: 10_000, reasoning: {} })).toBeUndefined();
  });

  it("an unknown effort, a non-object, or max_tokens too small to think in: 400 naming the field, nothing sent", async () => {
    const before = fake.requests.length;
    for (const [body, field] of [
      [{ max_tokens: 10_000, reasoning: { effort: "maximal" } }, "reasoning.effort"],
      [{ max_tokens: 10_000, reasoning: "high" }, "reasoning"],
      [{ max_tokens: 1000, reasoning: { effort: "low" } }, "reasoning.effort"],
    ] as const) {
      const err = await upstreamFailure(adapter.complete(call("ok", body), signal()));
      expect(err).toMatchObject({ status: 400, retryable: false });
      expect(err.message.startsWith(`${field}: `), err.message).toBe(true);
    }
    expect(fake.requests.length).toBe(before);
  });
});
