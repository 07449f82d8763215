import type { OpenRouter } from "@openrouter/sdk";
import type { ChatResult, ChatStreamChunk } from "@openrouter/sdk/models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countPromptTokens, countTextTokens } from "../../src/gateway/tokens/count-tokens.js";
import { systemClock } from "../../src/lib/clock.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import {
  FAKE_OPENAI_KEY,
  OK_TEXT,
  PARTS_TEXT,
  PARTS_THINKING,
  REASONING_ANSWER,
  REASONING_DETAILS,
  REASONING_TEXT,
  REFUSAL_TEXT,
  TOOL_CALL,
  TOOL_CALL_2,
  TWO_CHOICES_SECOND,
  logprobsOf,
  startFakeOpenAI,
} from "../helpers/fake-upstreams/openai.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * Answers of OpenAI-compatible upstreams in shapes beyond plain text, end to end through a
 * listening gateway to the fake upstream and back through the official SDK (retries off, so any
 * schema mismatch throws: ResponseValidationError, or a raw ZodError from a stream):
 *
 * - content sent as a list of parts (Mistral's reasoning models), whole and streamed: the client
 *   gets the text as its content and the thinking as `reasoning`;
 * - upstreams that report no usage, answering with a tool call only, with reasoning, in two
 *   choices, in parts: the counted completion tokens cover everything generated (each choice's
 *   content, reasoning, tool calls' names and arguments, counted with the gateway's own counter),
 *   and the key's usage grows by exactly the answer's cost;
 * - tool-call deltas as servers other than OpenAI stream them (null fields, no `index`, every call
 *   numbered 0): the SDK parses every chunk and assembles each call whole;
 * - log probabilities, when the request asks for them (Ollama's too, which leave out what the SDK
 *   requires).
 */
/** Prices in nano-USD per token (3.1e-6 and 12.7e-6 USD). */
const PROMPT_NANO = 3_100;
const COMPLETION_NANO = 12_700;
const MODELS = [
  "parts",
  "parts-no-usage",
  "tools-no-usage",
  "reasoning-no-usage",
  "two-choices-no-usage",
  "refusal",
  "refusal-no-usage",
  "reasoning-details",
  "tools-nulls",
  "tools-no-index",
  "tools-index-zero",
  "logprobs",
  "logprobs-ollama",
  "tools-untyped",
] as const;

const MESSAGES = [{ role: "user" as const, content: "Hi" }];
const TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "get_weather",
      description: "The weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];

let openai: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  file = writeProvidersFile(
    [{ slug: "local", kind: "openai-compatible", base_url: `${openai.url}/v1`, api_key_env: "LOCAL_KEY" }],
    MODELS.map((m) => ({
      id: `local/${m}`,
      provider: "local",
      upstream_model: m,
      prompt_price: "0.0000031",
      completion_price: "0.0000127",
    })),
  );
  s = await startListening({
    clock: systemClock,
    env: {
      GATEHOUSE_PROVIDERS_FILE: file.path,
      LOCAL_KEY: FAKE_OPENAI_KEY,
      RATE_LIMIT_MANAGEMENT_MAX: "100000",
    },
  });
});

afterAll(async () => {
  await s?.close();
  await openai?.close();
  file?.remove();
});

async function createKey(name: string): Promise<string> {
  const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name } });
  expect(r.statusCode).toBe(201);
  return r.json<{ key: string }>().key;
}

const keyUsage = async (sdk: OpenRouter): Promise<number> =>
  (await sdk.apiKeys.getCurrentKeyMetadata()).data.usage;

interface Answer {
  /** Each choice's content, reasoning and tool calls (names and arguments), as the client got them. */
  choices: { content: string; reasoning: string; tools: { name: string; arguments: string }[] }[];
  usage: {
    promptTokens: number;
    completionTokens: number;
    cost?: number | null;
    completionTokensDetails?: { reasoningTokens?: number | null } | null;
  };
  id: string;
}

/** One chat.send through the SDK, whole or streamed, gathered into the same shape. */
async function send(
  sdk: OpenRouter,
  model: string,
  stream: boolean,
  withTools = false,
  maxTokens?: number,
): Promise<Answer> {
  const chatRequest = {
    model: `local/${model}`,
    messages: MESSAGES,
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(withTools ? { tools: TOOLS } : {}),
  };
  const choices: Answer["choices"] = [];
  const choice = (i: number) => (choices[i] ??= { content: "", reasoning: "", tools: [] });
  if (!stream) {
    const res = <ChatResult>await sdk.chat.send({ chatRequest: { ...chatRequest, stream: false } });
    for (const c of res.choices) {
      const ch = choice(c.index);
      expect(typeof c.message.content === "string" || c.message.content === null).toBe(true);
      ch.content = (c.message.content as string | null) ?? "";
      ch.reasoning = c.message.reasoning ?? "";
      ch.tools = (c.message.toolCalls ?? []).map((t) => ({ ...t.function }));
    }
    return { choices, usage: res.usage!, id: res.id };
  }
  const events = <AsyncIterable<ChatStreamChunk>>(
    await sdk.chat.send({ chatRequest: { ...chatRequest, stream: true } })
  );
  let usage: Answer["usage"] | undefined;
  let id = "";
  for await (const c of events) {
    id = c.id;
    if (c.usage) usage = c.usage;
    for (const d of c.choices) {
      const ch = choice(d.index);
      ch.content += d.delta.content ?? "";
      ch.reasoning += d.delta.reasoning ?? "";
      for (const t of d.delta.toolCalls ?? []) {
        const tool = (ch.tools[t.index] ??= { name: "", arguments: "" });
        tool.name += t.function?.name ?? "";
        tool.arguments += t.function?.arguments ?? "";
      }
    }
  }
  return { choices, usage: usage!, id };
}

describe("content as a list of parts (Mistral's reasoning models)", () => {
  for (const stream of [false, true]) {
    it(`${stream ? "streamed" : "whole"}: the SDK parses it; the text parts are the content, the thinking is reasoning`, async () => {
      const key = await createKey(`parts-${stream}`);
      const a = await send(s.sdk(key), "parts", stream);
      expect(a.choices).toEqual([
        { content: PARTS_TEXT.join(""), reasoning: PARTS_THINKING.join(""), tools: [] },
      ]);
      // The upstream's own usage (the fake's 12 / 5) is what is charged.
      expect(a.usage).toMatchObject({ promptTokens: 12, completionTokens: 5 });
    });
  }

  it("the raw answers: a string content, and no delta whose content is not a string", async () => {
    const key = await createKey("parts-raw");
    const post = (stream: boolean) =>
      fetch(`${s.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "local/parts", messages: MESSAGES, stream }),
        signal: AbortSignal.timeout(15_000),
      });
    const whole = (await (await post(false)).json()) as { choices: { message: Record<string, unknown> }[] };
    expect(whole.choices[0]!.message).toEqual({
      role: "assistant",
      content: PARTS_TEXT.join(""),
      reasoning: PARTS_THINKING.join(""),
    });
    const events = (await (await post(true)).text())
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)) as { choices: { delta: Record<string, unknown> }[] });
    const deltas = events.flatMap((e) => e.choices.map((c) => c.delta));
    expect(deltas.length).toBeGreaterThan(4);
    for (const d of deltas) expect(["string", "undefined"]).toContain(typeof d.content);
  });
});

describe("stream options", () => {
  it("the upstream is asked for usage whatever the client sent, with the client's other stream options", async () => {
    const key = await createKey("stream-options");
    for (const stream_options of [undefined, { include_usage: false, include_obfuscation: false }]) {
      const r = await fetch(`${s.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "local/parts", messages: MESSAGES, stream: true, stream_options }),
        signal: AbortSignal.timeout(15_000),
      });
      expect(r.status).toBe(200);
      await r.text();
      expect(openai.requests.at(-1)!.body.stream_options).toEqual({
        ...(stream_options ?? {}),
        include_usage: true,
      });
    }
  });
});

describe("tool-call deltas as other OpenAI-compatible servers stream them", () => {
  const cases: { model: (typeof MODELS)[number]; calls: (typeof TOOL_CALL)[] }[] = [
    { model: "tools-nulls", calls: [TOOL_CALL] },
    { model: "tools-no-index", calls: [TOOL_CALL, TOOL_CALL_2] },
    { model: "tools-index-zero", calls: [TOOL_CALL, TOOL_CALL_2] },
  ];
  for (const c of cases) {
    it(`${c.model}: the SDK parses every chunk; each call arrives whole, under its own index`, async () => {
      const key = await createKey(c.model);
      const a = await send(s.sdk(key), c.model, true, true);
      expect(a.choices).toEqual([{ content: "", reasoning: "", tools: c.calls.map((t) => t.function) }]);
    });
  }

  it("a whole answer's tool call without its type (Mistral): the SDK parses it", async () => {
    const key = await createKey("tools-untyped");
    const res = <ChatResult>await s.sdk(key).chat.send({
      chatRequest: { model: "local/tools-untyped", messages: MESSAGES, tools: TOOLS, stream: false },
    });
    expect(res.choices[0]!.message.toolCalls).toEqual([TOOL_CALL]);
  });
});

describe("logprobs: true", () => {
  it("the upstream's log probabilities reach the client, whole and streamed; the SDK parses both", async () => {
    const key = await createKey("logprobs");
    const sdk = s.sdk(key);
    const chatRequest = { model: "local/logprobs", messages: MESSAGES, maxTokens: 100, logprobs: true };
    const whole = <ChatResult>await sdk.chat.send({ chatRequest: { ...chatRequest, stream: false } });
    const expected = (logprobsOf(OK_TEXT) as { content: { token: string; logprob: number }[] }).content;
    expect(whole.choices[0]!.logprobs?.content?.map((l) => [l.token, l.logprob])).toEqual(
      expected.map((l) => [l.token, l.logprob]),
    );
    expect(whole.choices[0]!.logprobs?.content?.[0]!.topLogprobs).toHaveLength(1);
    const events = <AsyncIterable<ChatStreamChunk>>(
      await sdk.chat.send({ chatRequest: { ...chatRequest, stream: true } })
    );
    const tokens: string[] = [];
    for await (const c of events) {
      for (const ch of c.choices) tokens.push(...(ch.logprobs?.content ?? []).map((l) => l.token));
    }
    expect(tokens).toEqual(OK_TEXT);
  });

  it("Ollama's, without top_logprobs or bytes: completed as the SDK requires ([] and null), whole and streamed", async () => {
    const sdk = s.sdk(await createKey("ollama logprobs"));
    const chatRequest = {
      model: "local/logprobs-ollama",
      messages: MESSAGES,
      maxTokens: 100,
      logprobs: true,
    };
    const expected = OK_TEXT.map((token) => ({ token, logprob: -0.25, bytes: null, topLogprobs: [] }));
    const whole = <ChatResult>await sdk.chat.send({ chatRequest: { ...chatRequest, stream: false } });
    expect(whole.choices[0]!.logprobs?.content).toEqual(expected);
    const events = <AsyncIterable<ChatStreamChunk>>(
      await sdk.chat.send({ chatRequest: { ...chatRequest, stream: true } })
    );
    const streamed: unknown[] = [];
    for await (const c of events) for (const ch of c.choices) streamed.push(...(ch.logprobs?.content ?? []));
    expect(streamed).toEqual(expected);
  });
});

describe("an upstream that reports no usage: the counted completion covers everything generated", () => {
  const count = (...texts: string[]) => texts.reduce((n, t) => n + countTextTokens(t), 0);
  const cases: {
    model: (typeof MODELS)[number];
    withTools?: boolean;
    choices: Answer["choices"];
    reasoning: number;
  }[] = [
    {
      model: "tools-no-usage",
      withTools: true,
      choices: [{ content: "", reasoning: "", tools: [{ ...TOOL_CALL.function }] }],
      reasoning: 0,
    },
    {
      model: "reasoning-no-usage",
      choices: [{ content: REASONING_ANSWER, reasoning: REASONING_TEXT.join(""), tools: [] }],
      reasoning: count(REASONING_TEXT.join("")),
    },
    {
      model: "two-choices-no-usage",
      choices: [
        { content: OK_TEXT.join(""), reasoning: "", tools: [] },
        { content: TWO_CHOICES_SECOND.join(""), reasoning: "", tools: [] },
      ],
      reasoning: 0,
    },
    {
      model: "parts-no-usage",
      choices: [{ content: PARTS_TEXT.join(""), reasoning: PARTS_THINKING.join(""), tools: [] }],
      reasoning: count(PARTS_THINKING.join("")),
    },
  ];
  for (const c of cases) {
    for (const stream of [false, true]) {
      it(`${c.model} (${stream ? "stream" : "whole"}): completion tokens = the count of its content, reasoning and tool calls; usage grows by the cost`, async () => {
        const key = await createKey(`${c.model}-${stream}`);
        const sdk = s.sdk(key);
        const before = await keyUsage(sdk);
        const a = await send(sdk, c.model, stream, c.withTools);
        expect(a.choices).toEqual(c.choices);
        const generated = count(
          ...a.choices.flatMap((ch) => [
            ch.content,
            ch.reasoning,
            ...ch.tools.flatMap((t) => [t.name, t.arguments]),
          ]),
        );
        expect(generated).toBeGreaterThan(0);
        expect(a.usage.completionTokens).toBe(generated);
        expect(a.usage.completionTokensDetails?.reasoningTokens).toBe(c.reasoning);
        // The prompt: the gateway's estimate of what it forwarded (the SDK's own wire form of it).
        const sent = openai.requests.at(-1)!.body as { messages: unknown[]; tools?: unknown[] };
        expect(sent.tools === undefined).toBe(!c.withTools);
        expect(a.usage.promptTokens).toBe(countPromptTokens(sent.messages, sent.tools));
        const cost = (a.usage.promptTokens * PROMPT_NANO + generated * COMPLETION_NANO) / 1e9;
        expect(a.usage.cost).toBe(cost);
        expect((await keyUsage(sdk)) - before).toBe(cost);
        const g = await sdk.generations.getGeneration({ id: a.id });
        expect(g.data.tokensCompletion).toBe(generated);
        expect(g.data.totalCost).toBe(cost);
      });
    }
  }
});

describe("an upstream that reports no usage and sends more than its max_tokens in this counter's tokens", () => {
  for (const stream of [false, true]) {
    it(`(${stream ? "stream" : "whole"}) is charged the completion tokens the hold covers, not the larger count`, async () => {
      const key = await createKey(`over-count-${stream}`);
      const sdk = s.sdk(key);
      const before = await keyUsage(sdk);
      const a = await send(sdk, "reasoning-no-usage", stream, false, 2);
      // What came back counts well over 2 tokens with the gateway's counter (another tokenizer's
      // 2 tokens can be several of this one's): the hold's 2 are what the upstream was allowed.
      const generated = countTextTokens(REASONING_TEXT.join("")) + countTextTokens(REASONING_ANSWER);
      expect(generated).toBeGreaterThan(2);
      expect(a.usage.completionTokens).toBe(2);
      expect(a.usage.completionTokensDetails?.reasoningTokens).toBe(2);
      const cost = (a.usage.promptTokens * PROMPT_NANO + 2 * COMPLETION_NANO) / 1e9;
      expect(a.usage.cost).toBe(cost);
      expect((await keyUsage(sdk)) - before).toBe(cost);
      expect((await sdk.generations.getGeneration({ id: a.id })).data.tokensCompletion).toBe(2);
    });
  }
});

describe("refusals and reasoning_details reach the client as the upstream sent them", () => {
  const post = async (key: string, model: string, stream: boolean) => {
    const r = await fetch(`${s.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: `local/${model}`, messages: MESSAGES, max_tokens: 100, stream }),
      signal: AbortSignal.timeout(15_000),
    });
    expect(r.status).toBe(200);
    return r;
  };
  const deltasOf = async (r: Response) =>
    (await r.text())
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .flatMap((e) => (JSON.parse(e.slice(6)) as { choices: { delta: Record<string, unknown> }[] }).choices)
      .map((c) => c.delta);

  it("a refusal (OpenAI's structured outputs), whole and streamed; the SDK parses both", async () => {
    const key = await createKey("refusal");
    const whole = (await (await post(key, "refusal", false)).json()) as {
      choices: { message: Record<string, unknown> }[];
    };
    expect(whole.choices[0]!.message).toEqual({
      role: "assistant",
      content: null,
      refusal: REFUSAL_TEXT.join(""),
    });
    const streamed = await deltasOf(await post(key, "refusal", true));
    expect(streamed.map((d) => (typeof d.refusal === "string" ? d.refusal : "")).join("")).toBe(
      REFUSAL_TEXT.join(""),
    );
    const sdk = s.sdk(key);
    const res = <ChatResult>await sdk.chat.send({
      chatRequest: { model: "local/refusal", messages: MESSAGES, maxTokens: 100, stream: false },
    });
    expect(res.choices[0]!.message.refusal).toBe(REFUSAL_TEXT.join(""));
  });

  it("a refusal without usage is counted and charged, whole and streamed", async () => {
    for (const stream of [false, true]) {
      const key = await createKey(`refusal-no-usage-${stream}`);
      const before = await keyUsage(s.sdk(key));
      const r = await post(key, "refusal-no-usage", stream);
      const text = await r.text();
      const usage = stream
        ? (
            JSON.parse(
              text
                .split("\n\n")
                .filter((e) => e.startsWith("data: {"))
                .at(-1)!
                .slice(6),
            ) as { usage: { completion_tokens: number; cost: number } }
          ).usage
        : (JSON.parse(text) as { usage: { completion_tokens: number; cost: number } }).usage;
      expect(usage.completion_tokens).toBe(countTextTokens(REFUSAL_TEXT.join("")));
      await s.app.gateway.recorder.settled();
      expect(await keyUsage(s.sdk(key))).toBeCloseTo(before + usage.cost, 12);
    }
  });

  it("reasoning_details, whole and streamed; the SDK parses both", async () => {
    const key = await createKey("details");
    const whole = (await (await post(key, "reasoning-details", false)).json()) as {
      choices: { message: Record<string, unknown> }[];
    };
    expect(whole.choices[0]!.message).toMatchObject({
      content: OK_TEXT.join(""),
      reasoning: "Opaque.",
      reasoning_details: REASONING_DETAILS,
    });
    const streamed = await deltasOf(await post(key, "reasoning-details", true));
    expect(streamed.flatMap((d) => (d.reasoning_details as unknown[]) ?? [])).toEqual(REASONING_DETAILS);
    const sdk = s.sdk(key);
    const res = <ChatResult>await sdk.chat.send({
      chatRequest: { model: "local/reasoning-details", messages: MESSAGES, maxTokens: 100, stream: false },
    });
    expect(res.choices[0]!.message.reasoningDetails).toEqual([
      { type: "reasoning.encrypted", data: "gAAAAB-opaque", format: "openai-responses-v1", index: 0 },
    ]);
    const events = <AsyncIterable<ChatStreamChunk>>await sdk.chat.send({
      chatRequest: { model: "local/reasoning-details", messages: MESSAGES, maxTokens: 100, stream: true },
    });
    const got: unknown[] = [];
    for await (const c of events) for (const ch of c.choices) got.push(...(ch.delta.reasoningDetails ?? []));
    expect(got).toHaveLength(1);
  });
});

describe("reasoning.exclude (or include_reasoning: false): the reasoning is charged, not shown", () => {
  const ask = async (key: string, model: string, stream: boolean, extra: Record<string, unknown>) => {
    const r = await fetch(`${s.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: `local/${model}`,
        messages: MESSAGES,
        max_tokens: 100,
        stream,
        ...extra,
      }),
      signal: AbortSignal.timeout(15_000),
    });
    expect(r.status).toBe(200);
    const text = await r.text();
    if (!stream) return JSON.parse(text) as Record<string, any>;
    const events = text
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)) as Record<string, any>);
    return { events, usage: events.at(-1)!.usage, raw: text };
  };

  for (const extra of [{ reasoning: { exclude: true } }, { include_reasoning: false }]) {
    it(`${JSON.stringify(extra)}: whole and streamed, without reasoning or reasoning_details`, async () => {
      const key = await createKey(`exclude-${Object.keys(extra)[0]}`);
      const whole = await ask(key, "reasoning-no-usage", false, extra);
      expect(whole.choices[0].message).toEqual({ role: "assistant", content: REASONING_ANSWER });
      // Counted without usage: the reasoning the client did not see is still charged.
      const reasoningTokens = countTextTokens(REASONING_TEXT.join(""));
      expect(whole.usage.completion_tokens_details.reasoning_tokens).toBe(reasoningTokens);
      expect(whole.usage.completion_tokens).toBe(reasoningTokens + countTextTokens(REASONING_ANSWER));

      const streamed = await ask(key, "reasoning-no-usage", true, extra);
      expect(streamed.raw).not.toContain('"reasoning":');
      expect(streamed.raw).not.toContain('"reasoning_details"');
      type StreamChoice = { delta: { content?: string }; finish_reason: string | null };
      const choices = (streamed.events as { choices: StreamChoice[] }[]).flatMap((e) => e.choices);
      expect(choices.map((c) => c.delta.content ?? "").join("")).toBe(REASONING_ANSWER);
      expect(streamed.usage.completion_tokens_details.reasoning_tokens).toBe(reasoningTokens);
      // Chunks that carried only reasoning are not sent as empty ones.
      expect(choices.every((c) => Object.keys(c.delta).length > 0 || c.finish_reason !== null)).toBe(true);

      const details = await ask(key, "reasoning-details", false, extra);
      expect(details.choices[0].message).toEqual({ role: "assistant", content: OK_TEXT.join("") });
    });
  }

  it("exclude false, or absent, shows it", async () => {
    const key = await createKey("exclude-false");
    const whole = await ask(key, "reasoning-details", false, { reasoning: { exclude: false } });
    expect(whole.choices[0].message).toMatchObject({
      reasoning: "Opaque.",
      reasoning_details: REASONING_DETAILS,
    });
  });
});
