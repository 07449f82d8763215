import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAICompatibleAdapter } from "../../../src/gateway/providers/openai/openai-compatible.js";
import {
  type ProviderAdapter,
  type ProviderChunk,
  type UpstreamCall,
} from "../../../src/gateway/providers/provider.js";
import type { FakeServer } from "../../helpers/fake-upstreams/fake-server.js";
import { upstreamFailure } from "../../helpers/fake-upstreams/upstream-failure.js";
import {
  FAKE_OPENAI_KEY,
  LLAMA_ERROR,
  OK_TEXT,
  PARTS_TEXT,
  PARTS_THINKING,
  REASONING_ANSWER,
  REASONING_TEXT,
  startFakeOpenAI,
} from "../../helpers/fake-upstreams/openai.js";

interface ToolCallDelta {
  index: number;
  id?: string;
  function: { name?: string; arguments: string };
}

let fake: FakeServer;
let adapter: ProviderAdapter;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  adapter = createOpenAICompatibleAdapter({
    baseUrl: `${fake.url}/v1/`,
    apiKey: FAKE_OPENAI_KEY,
    headers: { "x-extra": "yes" },
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
});

async function collect(it: AsyncIterable<ProviderChunk>): Promise<ProviderChunk[]> {
  const out: ProviderChunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}

const signal = (): AbortSignal => new AbortController().signal;
const lastRequest = () => fake.requests[fake.requests.length - 1]!;

describe("OpenAI-compatible adapter: complete", () => {
  it("sends the body with the upstream model, the key and the provider's headers; reads choices and usage", async () => {
    const res = await adapter.complete(
      call("ok", { temperature: 0.3, stream_options: { include_usage: true } }),
      signal(),
    );
    const req = lastRequest();
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
    expect(req.headers["x-extra"]).toBe("yes");
    expect(req.body).toEqual({
      messages: [{ role: "user", content: "Hi" }],
      temperature: 0.3,
      model: "ok",
      stream: false,
    });
    expect(res).toEqual({
      upstreamId: "chatcmpl-fake",
      choices: [
        { index: 0, message: { role: "assistant", content: OK_TEXT.join("") }, finish_reason: "stop" },
      ],
      usage: {
        promptTokens: 12,
        completionTokens: 5,
        cachedTokens: 4,
        cacheWriteTokens: 0,
        reasoningTokens: 2,
      },
    });
  });

  it("passes tool calls through", async () => {
    const res = await adapter.complete(call("tools"), signal());
    expect(res.choices[0]!.message.tool_calls).toEqual([
      { id: "call_abc", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
    ]);
    expect(res.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("usage is null when the upstream reports none", async () => {
    expect((await adapter.complete(call("no-usage"), signal())).usage).toBeNull();
  });

  it("reads `reasoning_content` as reasoning", async () => {
    const res = await adapter.complete(call("reasoning"), signal());
    expect(res.choices[0]!.message).toEqual({
      role: "assistant",
      content: REASONING_ANSWER,
      reasoning: REASONING_TEXT.join(""),
    });
  });

  it("content sent as a list of parts (Mistral): text parts joined into the content, thinking parts into reasoning", async () => {
    const res = await adapter.complete(call("parts"), signal());
    expect(res.choices[0]!.message).toEqual({
      role: "assistant",
      content: PARTS_TEXT.join(""),
      reasoning: PARTS_THINKING.join(""),
    });
  });

  it("500 is retryable with the upstream's message", async () => {
    const err = await upstreamFailure(adapter.complete(call("error-500"), signal()));
    expect(err).toMatchObject({ status: 500, retryable: true, retryAfterMs: null });
    expect(err.message).toContain("The server had an error");
  });

  it("429 is retryable and carries Retry-After in ms", async () => {
    expect(await upstreamFailure(adapter.complete(call("rate-limited"), signal()))).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 7_000,
    });
  });

  it("401 (a wrong key) is not retryable and the key is not in the message", async () => {
    const bad = createOpenAICompatibleAdapter({ baseUrl: `${fake.url}/v1`, apiKey: "sk-wrong-secret" });
    const err = await upstreamFailure(bad.complete(call("ok"), signal()));
    await bad.close?.();
    expect(err).toMatchObject({ status: 401, retryable: false });
    expect(err.message).not.toContain("sk-wrong-secret");
  });

  it("a truncated JSON body is a retryable malformed answer (nothing was output)", async () => {
    const err = await upstreamFailure(adapter.complete(call("bad-json"), signal()));
    expect(err).toMatchObject({ status: null, retryable: true });
    expect(err.message).toContain("malformed");
  });

  it("a slow upstream times out at the first-byte deadline, retryable", async () => {
    // the fake answers after 400 ms: only the 100 ms deadline produces this message
    const err = await upstreamFailure(adapter.complete(call("slow-headers", {}, 100), signal()));
    expect(err).toMatchObject({ status: null, retryable: true });
    expect(err.message).toContain("100 ms");
  });

  it("a connection dropped before the answer is a retryable connection failure", async () => {
    expect(await upstreamFailure(adapter.complete(call("reset"), signal()))).toMatchObject({
      status: null,
      retryable: true,
    });
  });

  it("a refused connection is retryable", async () => {
    const dead = createOpenAICompatibleAdapter({ baseUrl: "http://127.0.0.1:1/v1", apiKey: null });
    expect(await upstreamFailure(dead.complete(call("ok"), signal()))).toMatchObject({
      status: null,
      retryable: true,
    });
    await dead.close?.();
  });

  it("an already-aborted signal sends nothing", async () => {
    const before = fake.requests.length;
    const ac = new AbortController();
    ac.abort();
    expect(await upstreamFailure(adapter.complete(call("ok"), ac.signal))).toMatchObject({
      retryable: false,
    });
    expect(fake.requests.length).toBe(before);
  });
});

describe("OpenAI-compatible adapter: the router's reasoning", () => {
  const sent = async (body: Partial<UpstreamCall["body"]>): Promise<Record<string, unknown>> => {
    await adapter.complete(call("ok", body), signal());
    return lastRequest().body as Record<string, unknown>;
  };

  it("reasoning.effort is sent as reasoning_effort; reasoning and include_reasoning are not sent", async () => {
    const b = await sent({ reasoning: { effort: "high", exclude: true }, include_reasoning: true });
    expect(b.reasoning_effort).toBe("high");
    expect(b).not.toHaveProperty("reasoning");
    expect(b).not.toHaveProperty("include_reasoning");
    expect((await sent({ reasoning: { effort: "max" } })).reasoning_effort).toBe("high");
    // The client's own reasoning_effort wins.
    expect((await sent({ reasoning_effort: "low", reasoning: { effort: "high" } })).reasoning_effort).toBe(
      "low",
    );
  });

  it("what has no OpenAI form asks for the model's default: no reasoning_effort, no reasoning", async () => {
    for (const reasoning of [
      { max_tokens: 2000 },
      { enabled: true },
      { effort: "none" },
      { exclude: true },
    ]) {
      const b = await sent({ reasoning });
      expect(b).not.toHaveProperty("reasoning");
      expect(b).not.toHaveProperty("reasoning_effort");
    }
    // A request without them is sent as it was.
    const plain = await sent({ temperature: 0.2 });
    expect(plain).not.toHaveProperty("reasoning_effort");
    expect(plain.temperature).toBe(0.2);
  });
});

describe("OpenAI-compatible adapter: stream", () => {
  it("always asks for usage, keeps the client's other stream options, and translates chunks", async () => {
    const chunks = await collect(
      adapter.stream(call("ok", { stream_options: { include_usage: false, x: 1 } }), signal()),
    );
    expect(lastRequest().body.stream).toBe(true);
    expect(lastRequest().body.stream_options).toEqual({ include_usage: true, x: 1 });
    expect(lastRequest().headers.accept).toBe("text/event-stream");
    const text = chunks
      .flatMap((c) => c.choices.map((ch) => (ch.delta.content as string | undefined) ?? ""))
      .join("");
    expect(text).toBe(OK_TEXT.join(""));
    // null fields (refusal) are dropped from deltas: the SDK's chunk schema rejects them
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "Hello" });
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("stop");
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({
      promptTokens: 12,
      completionTokens: 5,
      cachedTokens: 4,
      cacheWriteTokens: 0,
      reasoningTokens: 2,
    });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it("streams tool-call deltas as OpenAI sends them", async () => {
    const chunks = await collect(adapter.stream(call("tools"), signal()));
    const args = chunks.flatMap((c) =>
      c.choices.flatMap((ch) => (ch.delta.tool_calls as ToolCallDelta[] | undefined) ?? []),
    );
    expect(args.map((t) => t.function.arguments).join("")).toBe('{"city":"Paris"}');
    expect(args[0]).toMatchObject({ id: "call_abc", function: { name: "get_weather" } });
  });

  it("deltas whose content is a list of parts (Mistral) carry string content and reasoning", async () => {
    const chunks = await collect(adapter.stream(call("parts"), signal()));
    const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta));
    expect(deltas.slice(0, 5)).toEqual([
      { role: "assistant", reasoning: PARTS_THINKING[0] },
      { reasoning: PARTS_THINKING[1] },
      { content: PARTS_TEXT[0] },
      { content: PARTS_TEXT[1] },
      { content: PARTS_TEXT[2] },
    ]);
    expect(deltas.every((d) => d.content === undefined || typeof d.content === "string")).toBe(true);
  });

  it("streamed `reasoning_content` becomes `reasoning`", async () => {
    const chunks = await collect(adapter.stream(call("reasoning"), signal()));
    const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta));
    const joined = (k: string) => deltas.map((d) => (d[k] as string | undefined) ?? "").join("");
    expect(joined("reasoning")).toBe(REASONING_TEXT.join(""));
    expect(joined("content")).toBe(REASONING_ANSWER);
    expect(deltas.some((d) => "reasoning_content" in d)).toBe(false);
  });

  it("a stream without usage ends normally with usage null everywhere", async () => {
    const chunks = await collect(adapter.stream(call("no-usage"), signal()));
    expect(chunks.every((c) => c.usage === null)).toBe(true);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
  });

  it("failures before the first chunk throw from the first iteration, retryable", async () => {
    for (const [model, status] of [
      ["error-500", 500],
      ["rate-limited", 429],
    ] as const) {
      const it = adapter.stream(call(model), signal())[Symbol.asyncIterator]();
      expect(await upstreamFailure(it.next())).toMatchObject({ status, retryable: true });
    }
    expect(await upstreamFailure(collect(adapter.stream(call("bad-json"), signal())))).toMatchObject({
      retryable: true,
    });
  });

  it("the first-byte deadline covers the first body chunk, not only the headers", async () => {
    const err = await upstreamFailure(collect(adapter.stream(call("slow-body", {}, 100), signal())));
    expect(err).toMatchObject({ status: null, retryable: true });
    expect(err.message).toContain("100 ms");
  });

  it("malformed JSON after output is not retryable", async () => {
    const got: ProviderChunk[] = [];
    const err = await upstreamFailure(
      (async () => {
        for await (const c of adapter.stream(call("bad-json-late"), signal())) got.push(c);
      })(),
    );
    expect(got).toHaveLength(1);
    expect(err).toMatchObject({ status: null, retryable: false });
  });

  it("a connection reset mid-stream throws after the chunks already yielded", async () => {
    const got: ProviderChunk[] = [];
    const err = await upstreamFailure(
      (async () => {
        for await (const c of adapter.stream(call("reset"), signal())) got.push(c);
      })(),
    );
    expect(got).toHaveLength(1);
    expect(err.status).toBeNull();
  });

  it("an error event in the stream becomes an UpstreamError with its code", async () => {
    const err = await upstreamFailure(collect(adapter.stream(call("in-band-error"), signal())));
    expect(err).toMatchObject({ status: 503, retryable: false });
    expect(err.message).toContain("Upstream overloaded");
  });

  it("llama.cpp's `error: {…}` line is the upstream's error, with its code and message", async () => {
    const before = await upstreamFailure(
      adapter.stream(call("llama-error"), signal())[Symbol.asyncIterator]().next(),
    );
    expect(before).toMatchObject({ status: 400, retryable: false });
    expect(before.message).toContain(LLAMA_ERROR);
    const got: ProviderChunk[] = [];
    const after = await upstreamFailure(
      (async () => {
        for await (const c of adapter.stream(call("llama-error-late"), signal())) got.push(c);
      })(),
    );
    expect(got).toHaveLength(1);
    expect(after).toMatchObject({ status: 500, retryable: false });
    expect(after.message).toContain(LLAMA_ERROR);
  });

  it("aborting the signal cancels a stream that never ends, and the upstream sees its connection close", async () => {
    const ac = new AbortController();
    const it = adapter.stream(call("never-ends"), ac.signal)[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.done).toBe(false);
    const req = lastRequest();
    const pending = it.next();
    setTimeout(() => ac.abort(), 100);
    expect(await upstreamFailure(pending)).toMatchObject({ retryable: false });
    expect(await req.closed).toEqual({ aborted: true });
  });

  it("a consumer that stops iterating (break) also closes the upstream connection", async () => {
    for await (const _ of adapter.stream(call("never-ends"), signal())) break;
    expect(await lastRequest().closed).toEqual({ aborted: true });
  });

  it("sequential requests, streamed or not, reuse kept-alive connections", async () => {
    const fresh = createOpenAICompatibleAdapter({ baseUrl: `${fake.url}/v1`, apiKey: FAKE_OPENAI_KEY });
    const from = fake.requests.length;
    for (let i = 0; i < 4; i++) {
      await fresh.complete(call("ok"), signal());
      await collect(fresh.stream(call("ok"), signal()));
    }
    await fresh.close?.();
    const ports = new Set(fake.requests.slice(from).map((r) => r.remotePort));
    expect(fake.requests.length - from).toBe(8);
    // undici may open a second connection while the first is being released; never one per request.
    expect(ports.size).toBeLessThanOrEqual(2);
  });
});

describe("OpenAI-compatible adapter: a stream's bytes", () => {
  it("drops a leading byte-order mark and keeps characters cut between reads whole", async () => {
    const text = "héllo ☃ 𝄞 done";
    const event = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(
        event({
          id: "u-1",
          choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }],
        }) +
          event({ id: "u-1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
          "data: [DONE]\n\n",
      ),
    ]);
    // Cut inside the mark, and inside each multi-byte character (2, 3 and 4 bytes), each piece
    // sent on its own after a pause, so that the adapter reads them separately.
    const cuts = [1, ...["é", "☃", "𝄞"].map((c) => bytes.indexOf(Buffer.from(c)) + 1), bytes.length];
    const pieces = cuts.map((end, i) => bytes.subarray(i === 0 ? 0 : cuts[i - 1], end));
    expect(Buffer.concat(pieces).equals(bytes)).toBe(true);
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        void (async () => {
          for (const p of pieces) {
            res.write(p);
            await new Promise((r) => setTimeout(r, 15));
          }
          res.end();
        })();
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const { port } = server.address() as AddressInfo;
    const marked = createOpenAICompatibleAdapter({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: null });
    try {
      const chunks = await collect(marked.stream(call("marked"), signal()));
      expect(chunks.map((c) => c.choices[0]?.delta.content as string | undefined).join("")).toBe(text);
      expect(chunks[0]!.upstreamId).toBe("u-1");
      expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
    } finally {
      await marked.close?.();
      await new Promise((done) => server.close(done));
    }
  });
});
