import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAnthropicAdapter } from "../../src/gateway/providers/anthropic/anthropic.js";
import { createOpenAICompatibleAdapter } from "../../src/gateway/providers/openai/openai-compatible.js";
import {
  UpstreamTimeout,
  type EmbedCall,
  type ProviderAdapter,
} from "../../src/gateway/providers/provider.js";
import {
  neverAnswer,
  startFakeServer,
  type FakeServer,
  type RecordedRequest,
} from "../helpers/fake-upstreams/fake-server.js";
import { upstreamFailure } from "../helpers/fake-upstreams/upstream-failure.js";

/**
 * The OpenAI-compatible adapter's embed against a fake upstream on 127.0.0.1 that answers as
 * OpenAI documents POST /v1/embeddings: `{object: "list", data: [{object: "embedding", index,
 * embedding}], model, usage: {prompt_tokens, total_tokens}}`, the embedding a list of floats or,
 * for `encoding_format: "base64"`, base64 of little-endian float32 bytes; errors as `{error:
 * {message, type, param, code}}` with an HTTP status.
 */

const KEY = "sk-fake-embeddings-key-0123456789";

/** The fake's vector for input i: [i + 0.5, -(i + 0.25), i / 8], all exact in float32. */
const vectorFor = (i: number): number[] => [i + 0.5, -(i + 0.25), i / 8];

/** Little-endian float32 bytes, written here independently of the code under test. */
function base64Of(values: number[]): string {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeFloatLE(v, i * 4));
  return b.toString("base64");
}

function answer(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

const inputsOf = (req: RecordedRequest): unknown[] => {
  const input: unknown = (req.body as { input: unknown }).input;
  return typeof input === "string" || typeof (input as unknown[])[0] === "number"
    ? [input]
    : (input as unknown[]);
};

let fake: FakeServer;
let adapter: ProviderAdapter;

beforeAll(async () => {
  fake = await startFakeServer((req, res) => {
    const body = req.body as { model: string };
    const n = inputsOf(req).length;
    const list = (embedding: (i: number) => unknown, order = (i: number) => i) =>
      Array.from({ length: n }, (_, k) => {
        const i = order(k);
        return { object: "embedding", index: i, embedding: embedding(i) };
      });
    const usage = { prompt_tokens: 7 * n, total_tokens: 7 * n };
    switch (body.model) {
      case "float":
        return answer(res, 200, { object: "list", data: list(vectorFor), model: "float-v1", usage });
      case "base64":
        return answer(res, 200, {
          object: "list",
          data: list((i) => base64Of(vectorFor(i))),
          model: "b64-v1",
          usage,
        });
      case "reversed":
        return answer(res, 200, {
          object: "list",
          data: list(vectorFor, (k) => n - 1 - k),
          model: "r",
          usage,
        });
      case "no-usage":
        return answer(res, 200, { object: "list", data: list(vectorFor), model: "n" });
      case "short":
        return answer(res, 200, { object: "list", data: list(vectorFor).slice(1), model: "s", usage });
      case "not-float32":
        return answer(res, 200, { object: "list", data: list(() => "abc"), model: "x", usage });
      case "bad-request":
        return answer(res, 400, {
          error: {
            message: `'$.input' is invalid. Incorrect API key provided: ${KEY}`,
            type: "invalid_request_error",
            param: null,
            code: null,
          },
        });
      case "rate-limited":
        return answer(
          res,
          429,
          { error: { message: "Rate limit reached", type: "requests" } },
          { "retry-after": "2" },
        );
      case "in-band":
        return answer(res, 200, { error: { message: "model overloaded", code: 503 } });
      case "slow":
        return neverAnswer(res);
      default:
        return answer(res, 404, { error: { message: `The model ${body.model} does not exist` } });
    }
  });
  adapter = createOpenAICompatibleAdapter({
    baseUrl: `${fake.url}/v1/`,
    apiKey: KEY,
    headers: { "x-extra": "yes" },
    idleTimeoutMs: 10_000,
  });
});
afterAll(async () => {
  await adapter.close?.();
  await fake.close();
});

const signal = (): AbortSignal => new AbortController().signal;
const call = (upstreamModel: string, extra: Partial<EmbedCall> = {}): EmbedCall => ({
  upstreamModel,
  input: ["first", "second"],
  timeoutMs: 10_000,
  ...extra,
});
const lastRequest = () => fake.requests[fake.requests.length - 1]!;
const plain = (v: Float32Array) => Array.from(v);

describe("OpenAI-compatible adapter: embed", () => {
  it("POSTs {base}/embeddings with the key and headers, always asking for float; reads the vectors and usage", async () => {
    const res = await adapter.embed!(call("float"), signal());
    const req = lastRequest();
    expect(req.path).toBe("/v1/embeddings");
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers["x-extra"]).toBe("yes");
    expect(req.body).toEqual({ model: "float", input: ["first", "second"], encoding_format: "float" });
    expect(res.vectors.map(plain)).toEqual([vectorFor(0), vectorFor(1)]);
    expect(res.vectors[0]).toBeInstanceOf(Float32Array);
    expect(res.usage).toEqual({ promptTokens: 14 });
    expect(res.upstreamId).toBeNull();
  });

  it("forwards dimensions, input_type and user only when set, and a BYOK key instead of the provider's", async () => {
    await adapter.embed!(
      call("float", {
        input: "one",
        dimensions: 3,
        inputType: "search_query",
        user: "u-1",
        apiKey: "sk-org-own",
      }),
      signal(),
    );
    const req = lastRequest();
    expect(req.body).toEqual({
      model: "float",
      input: "one",
      encoding_format: "float",
      dimensions: 3,
      input_type: "search_query",
      user: "u-1",
    });
    expect(req.headers.authorization).toBe("Bearer sk-org-own");
  });

  it("token-id inputs: a flat list is one vector, a list of lists one each", async () => {
    expect((await adapter.embed!(call("float", { input: [1, 2, 3] }), signal())).vectors).toHaveLength(1);
    expect(lastRequest().body).toMatchObject({ input: [1, 2, 3] });
    const res = await adapter.embed!(call("float", { input: [[1], [2, 3], [4]] }), signal());
    expect(res.vectors.map(plain)).toEqual([vectorFor(0), vectorFor(1), vectorFor(2)]);
  });

  it("reads a base64 answer as little-endian float32", async () => {
    const res = await adapter.embed!(call("base64"), signal());
    expect(res.vectors.map(plain)).toEqual([vectorFor(0), vectorFor(1)]);
  });

  it("puts the vectors in index order; no usage is null (the gateway counts)", async () => {
    expect(
      (await adapter.embed!(call("reversed", { input: ["a", "b", "c"] }), signal())).vectors.map(plain),
    ).toEqual([vectorFor(0), vectorFor(1), vectorFor(2)]);
    expect((await adapter.embed!(call("no-usage"), signal())).usage).toBeNull();
  });

  it("refuses an answer it cannot trust: too few vectors, bad base64, other dimensions than asked", async () => {
    const short = await upstreamFailure(adapter.embed!(call("short"), signal()));
    expect(short.message).toBe("upstream sent a malformed answer: 1 embeddings for 2 inputs");
    expect(short.retryable).toBe(true);
    const bad = await upstreamFailure(adapter.embed!(call("not-float32"), signal()));
    expect(bad.message).toMatch(/data\[0\]\.embedding is not a list of numbers or base64 float32/);
    const dims = await upstreamFailure(adapter.embed!(call("float", { dimensions: 256 }), signal()));
    expect(dims.message).toBe("upstream sent a malformed answer: embeddings of 3 dimensions, 256 asked for");
  });

  it("an error status is an UpstreamError with its status and message, the key redacted", async () => {
    const err = await upstreamFailure(adapter.embed!(call("bad-request"), signal()));
    expect(err.status).toBe(400);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain("'$.input' is invalid");
    expect(err.message).not.toContain(KEY);
    const limited = await upstreamFailure(adapter.embed!(call("rate-limited"), signal()));
    expect([limited.status, limited.retryable, limited.retryAfterMs]).toEqual([429, true, 2000]);
    const missing = await upstreamFailure(adapter.embed!(call("no-such-model"), signal()));
    expect([missing.status, missing.retryable]).toEqual([404, false]);
    const inBand = await upstreamFailure(adapter.embed!(call("in-band"), signal()));
    expect([inBand.status, inBand.message]).toEqual([503, "upstream reported an error: model overloaded"]);
  });

  it("an upstream that sends nothing within timeoutMs is an UpstreamTimeout, and the connection is closed", async () => {
    const started = Date.now();
    const err = await upstreamFailure(adapter.embed!(call("slow", { timeoutMs: 300 }), signal()));
    expect(err).toBeInstanceOf(UpstreamTimeout);
    expect((err as UpstreamTimeout).phase).toBe("first-byte");
    expect(err.retryable).toBe(true);
    expect(err.sent).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(await lastRequest().closed).toEqual({ aborted: true });
  });

  it("Anthropic's adapter has no embed: the pipeline refuses such an endpoint", async () => {
    const anthropic = createAnthropicAdapter({ baseUrl: fake.url, apiKey: KEY });
    expect(anthropic.embed).toBeUndefined();
    await anthropic.close?.();
  });
});
