import { describe, expect, it } from "vitest";
import { MockAdapter } from "../../src/gateway/providers/mock.js";
import { MOCK_EMBED_DIMENSIONS, mockVector } from "../../src/gateway/providers/mock-embed.js";
import { UpstreamCancelled, type EmbedCall } from "../../src/gateway/providers/provider.js";
import { countTextTokens } from "../../src/gateway/tokens/count-tokens.js";
import { countEmbeddingTokens } from "../../src/gateway/tokens/embedding-tokens.js";
import { upstreamFailure } from "../helpers/fake-upstreams/upstream-failure.js";

/** The built-in mock's `embed` model: deterministic vectors, counted usage. */

const signal = (): AbortSignal => new AbortController().signal;
const call = (input: EmbedCall["input"], extra: Partial<EmbedCall> = {}): EmbedCall => ({
  upstreamModel: "embed",
  input,
  timeoutMs: 10_000,
  ...extra,
});
const plain = (v: Float32Array) => Array.from(v);
const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe("mock embed", () => {
  it("the same text gives the same vector, in any request and any adapter; another text another", async () => {
    const a = await new MockAdapter({ latencyMs: 0 }).embed(call(["hello", "world", "hello"]), signal());
    const b = await new MockAdapter({ latencyMs: 0 }).embed(call("hello"), signal());
    expect(a.vectors).toHaveLength(3);
    expect(plain(a.vectors[0]!)).toEqual(plain(b.vectors[0]!));
    expect(plain(a.vectors[2]!)).toEqual(plain(a.vectors[0]!));
    expect(plain(a.vectors[1]!)).not.toEqual(plain(a.vectors[0]!));
  });

  it("is stable across releases: the vector of a text is pinned", () => {
    // A change here changes every stored mock vector: tests and demos compare them.
    expect(plain(mockVector("hello")).map((x) => Math.round(x * 1e4) / 1e4)).toEqual([
      -0.3796, -0.267, 0.072, 0.3197, 0.5417, 0.5063, 0.3493, -0.0734,
    ]);
  });

  it("8 dimensions by default, `dimensions` when asked; every vector has length 1", async () => {
    const mock = new MockAdapter({ latencyMs: 0 });
    const def = await mock.embed(call(["x", "y"]), signal());
    expect(MOCK_EMBED_DIMENSIONS).toBe(8);
    expect(def.vectors.map((v) => v.length)).toEqual([8, 8]);
    for (const dimensions of [1, 3, 9, 1536, 4096]) {
      const [v] = (await mock.embed(call("x", { dimensions }), signal())).vectors;
      expect(v!.length).toBe(dimensions);
      expect(norm(v!)).toBeCloseTo(1, 5);
      if (dimensions === 1) expect(Math.abs(v![0]!)).toBeCloseTo(1, 6);
    }
    // Values spread over [-1, 1): a long vector has both signs, none outside.
    const [long] = (await mock.embed(call("x", { dimensions: 1536 }), signal())).vectors;
    expect(long!.some((x) => x < 0) && long!.some((x) => x > 0)).toBe(true);
    const err = await upstreamFailure(mock.embed(call("x", { dimensions: 4097 }), signal()));
    expect([err.status, err.retryable]).toEqual([400, false]);
  });

  it('token ids have their own vectors: [1, 2] is not the text "1,2"; a flat list is one input', async () => {
    const mock = new MockAdapter({ latencyMs: 0 });
    const flat = await mock.embed(call([1, 2]), signal());
    const nested = await mock.embed(call([[1, 2], [3]]), signal());
    const text = await mock.embed(call("1,2"), signal());
    expect(flat.vectors).toHaveLength(1);
    expect(plain(nested.vectors[0]!)).toEqual(plain(flat.vectors[0]!));
    expect(plain(text.vectors[0]!)).not.toEqual(plain(flat.vectors[0]!));
  });

  it("usage is the input's tokens as the gateway counts them", async () => {
    const mock = new MockAdapter({ latencyMs: 0 });
    const texts = ["The quick brown fox", "jumps over the lazy dog."];
    const res = await mock.embed(call(texts), signal());
    const expected = countTextTokens(texts[0]!) + countTextTokens(texts[1]!);
    expect(expected).toBeGreaterThan(4);
    expect(res.usage).toEqual({ promptTokens: expected });
    expect((await mock.embed(call([[5, 6, 7], [8]]), signal())).usage).toEqual({ promptTokens: 4 });
  });

  it("fails as asked ([[mock fail=…]], mock/unavailable's model) and refuses a chat model with a 404", async () => {
    const mock = new MockAdapter({ latencyMs: 0 });
    const asked = await upstreamFailure(mock.embed(call(["ok", "[[mock fail=502]]"]), signal()));
    expect([asked.status, asked.retryable]).toEqual([502, true]);
    const down = await upstreamFailure(mock.embed(call("x", { upstreamModel: "unavailable" }), signal()));
    expect([down.status, down.retryable]).toEqual([503, true]);
    const chat = await upstreamFailure(mock.embed(call("x", { upstreamModel: "echo" }), signal()));
    expect([chat.status, chat.retryable, chat.message]).toEqual([
      404,
      false,
      "mock model echo does not embed",
    ]);
  });

  it("waits its latency under the signal: a cancelled call fails, after sending", async () => {
    const mock = new MockAdapter({ latencyMs: 5_000 });
    const controller = new AbortController();
    const pending = mock.embed(call("x"), controller.signal);
    setTimeout(() => controller.abort(), 20);
    const err = await upstreamFailure(pending);
    expect(err).toBeInstanceOf(UpstreamCancelled);
    expect(err.sent).toBe(true);
  });
});

describe("countEmbeddingTokens", () => {
  it("texts counted as chat text is, token lists by their length; the longest input too", () => {
    const long = "word ".repeat(50);
    expect(countEmbeddingTokens(["hi", long])).toEqual({
      total: countTextTokens("hi") + countTextTokens(long),
      longest: countTextTokens(long),
    });
    expect(countEmbeddingTokens("hi")).toEqual({
      total: countTextTokens("hi"),
      longest: countTextTokens("hi"),
    });
    expect(countEmbeddingTokens([1, 2, 3])).toEqual({ total: 3, longest: 3 });
    expect(
      countEmbeddingTokens([
        [1, 2],
        [3, 4, 5, 6],
      ]),
    ).toEqual({ total: 6, longest: 4 });
  });
});
