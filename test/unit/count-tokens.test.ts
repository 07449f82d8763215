import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  CHUNK,
  EXACT_UNITS,
  REPLY_PRIMING_TOKENS,
  TOKENS_PER_MESSAGE,
  CountCache,
  countCache,
  countPromptTokens,
  countTextTokens,
} from "../../src/gateway/tokens/count-tokens.js";
import { REMOTE_IMAGE_TOKENS } from "../../src/gateway/tokens/image-tokens.js";

describe("token counting (o200k_base)", () => {
  it("counts text as the o200k encoding does", () => {
    expect(countTextTokens("")).toBe(0);
    expect(countTextTokens("Hello, world!")).toBe(4);
    // grows with the text, roughly 4 characters per English token
    const long = "The quick brown fox jumps over the lazy dog. ".repeat(100);
    expect(countTextTokens(long)).toBeGreaterThan(long.length / 6);
    expect(countTextTokens(long)).toBeLessThan(long.length / 3);
  });

  it("treats special-token strings in user text as text, never throwing", () => {
    expect(countTextTokens("a<|endoftext|>b")).toBeGreaterThan(3);
  });

  it("a prompt is its messages' roles and content plus per-message overhead and the reply priming", () => {
    const one = countPromptTokens([{ role: "user", content: "Hello!" }]);
    expect(one).toBe(
      REPLY_PRIMING_TOKENS + TOKENS_PER_MESSAGE + countTextTokens("user") + countTextTokens("Hello!"),
    );
    // OpenAI's published rule for this classic two-message example gives the same total
    expect(
      countPromptTokens([
        { role: "system", content: "You are a helpful assistant." },
        { role: "user", content: "Hello!" },
      ]),
    ).toBe(19);
  });

  it("counts content parts, images, names, tool calls, tool results and tool definitions", () => {
    const base = countPromptTokens([{ role: "user", content: [{ type: "text", text: "What is this?" }] }]);
    expect(base).toBe(countPromptTokens([{ role: "user", content: "What is this?" }]));
    const withImage = countPromptTokens([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "https://x/y.png" } },
        ],
      },
    ]);
    // a remote image is never fetched: the rule's largest image
    expect(withImage - base).toBe(REMOTE_IMAGE_TOKENS.openai);
    const toolCalls = [
      { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
    ];
    const conversation = [
      { role: "user", content: "Weather?", name: "alice" },
      { role: "assistant", content: null, tool_calls: toolCalls },
      { role: "tool", tool_call_id: "call_1", content: "18C" },
    ];
    const counted = countPromptTokens(conversation);
    expect(counted).toBeGreaterThan(
      countPromptTokens([{ role: "user", content: "Weather?" }]) + countTextTokens(JSON.stringify(toolCalls)),
    );
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }];
    expect(countPromptTokens(conversation, tools) - counted).toBe(countTextTokens(JSON.stringify(tools)));
  });

  it("ignores shapes it does not know instead of failing the request", () => {
    expect(countPromptTokens([null, 3, "x", { role: "user" }])).toBe(
      REPLY_PRIMING_TOKENS + TOKENS_PER_MESSAGE + 1,
    );
  });

  /** The encoder's own count of the whole text, in one piece (the reference). */
  const whole = (text: string): number =>
    (
      createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as {
        countTokens: (t: string, o: object) => number;
      }
    ).countTokens(text, { disallowedSpecial: new Set() });

  it("counts long prose in pieces exactly as the encoder counts it whole", () => {
    const words = [
      "gateway",
      "reserves",
      "the",
      "worst",
      "case,",
      "then",
      "settles.",
      "Budget",
      "42",
      "naïve",
    ];
    let text = "";
    for (let i = 0; text.length < 20 * CHUNK; i++)
      text += words[(i * 7) % words.length] + (i % 13 === 0 ? "\n" : " ");
    expect(countTextTokens(text)).toBe(whole(text));
    const emoji = "🙂 ".repeat(3 * CHUNK); // surrogate pairs across piece boundaries
    expect(countTextTokens(emoji)).toBe(whole(emoji));
  });

  it("a long prompt is counted exactly up to the budget, then estimated: never under a token per 4 bytes", () => {
    const words = ["gateway", "reserves", "the", "worst", "case,", "then", "settles.", "Budget", "42"];
    let prose = "";
    for (let i = 0; prose.length < 1_048_576; i++) prose += words[(i * 7) % words.length] + " ";
    const exact = whole(prose);
    const counted = countTextTokens(prose);
    expect(counted).toBeGreaterThanOrEqual(exact);
    expect(counted).toBeLessThan(exact * 1.3);
    // A prompt shares one budget between its messages: two halves estimate like the whole.
    const half = prose.slice(0, prose.length / 2);
    const two = countPromptTokens([
      { role: "user", content: half },
      { role: "user", content: half },
    ]);
    expect(two).toBeGreaterThanOrEqual(whole(half) * 2);
    expect(two).toBeLessThan(whole(half) * 2 * 1.3);
  });

  it("a text counted before is not counted again, and a prompt counts the same with or without the cache", () => {
    const words = ["history", "of", "a", "long", "chat,", "sent", "again", "each", "turn."];
    const turn = (i: number) =>
      Array.from({ length: 1500 }, (_, j) => words[(i + j * 5) % words.length]).join(" ");
    // A conversation re-sent with every turn, long enough that its last turns pass the budget.
    const history = Array.from({ length: 12 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: turn(i),
    }));
    const cold = history.map((_, i) => {
      countCache.clear();
      return countPromptTokens(history.slice(0, i + 1));
    });
    countCache.clear();
    const warm = history.map((_, i) => countPromptTokens(history.slice(0, i + 1)));
    expect(warm).toEqual(cold);
    expect(history.reduce((n, m) => n + m.content.length, 0)).toBeGreaterThan(EXACT_UNITS);
    // Each message and role was kept once, however many turns re-sent it: those the budget held whole.
    let left = EXACT_UNITS;
    let whole = 0;
    for (const m of history) {
      left -= m.role.length;
      if (left >= m.content.length) whole++;
      left -= m.content.length;
    }
    expect(whole).toBeGreaterThan(2);
    expect(whole).toBeLessThan(history.length);
    expect(countCache.size()).toBe(whole + 2);
    // A text counted past the budget (estimated) is not kept as if it were exact.
    countCache.clear();
    const text = turn(0).repeat(8);
    countPromptTokens([
      { role: "user", content: text.slice(0, 40_000) }, // over 16,384 units: never kept
      { role: "user", content: text.slice(0, 15_000) }, // whole within the budget: kept
      { role: "user", content: text.slice(1, 15_001) }, // past the budget: estimated, not kept
    ]);
    expect(countCache.size()).toBe(2); // "user" and the second text
  });

  it("the count cache keeps the texts used last, within its bound", () => {
    // Each entry costs its length plus 32 units (the Map's own memory).
    const cache = new CountCache(80, 6);
    cache.set("aaaa", 1);
    cache.set("bbbb", 2);
    expect(cache.get("aaaa")).toBe(1); // now the most recent
    cache.set("cccc", 3); // 108 units: the least recently used goes
    expect(cache.get("bbbb")).toBeUndefined();
    expect(cache.get("aaaa")).toBe(1);
    expect(cache.get("cccc")).toBe(3);
    expect(cache.heldUnits).toBe(72);
    cache.set("dddddddd", 4); // over cacheableUnits: not kept
    expect(cache.get("dddddddd")).toBeUndefined();
    expect(cache.heldUnits).toBe(72);
    // Tiny texts are bounded by their number too: two-letter texts do not fill memory.
    const tiny = new CountCache(32 * 100);
    for (let i = 0; i < 10_000; i++) tiny.set(i.toString(36).padStart(2, "0"), 1);
    expect(tiny.size).toBeLessThanOrEqual(100);
  });

  it("a megabyte the encoder cannot shortcut is counted in linear time", () => {
    // Whole, byte-pair merging is quadratic in a run without a break: 8,000 characters took
    // 20 ms, a megabyte minutes; rare pairs cost ~0.4-0.9 µs per character even in pieces.
    for (const ch of ["a", "!", "7", "\u00e9", "🙂", " "]) {
      const run = ch.repeat(Math.floor(1_048_576 / ch.length));
      const n = countTextTokens(run);
      expect(n).toBeGreaterThanOrEqual(Math.floor((Buffer.byteLength(run) - EXACT_UNITS * 4) / 4));
      expect(n).toBeLessThanOrEqual(Buffer.byteLength(run)); // a token is at least a byte
    }
  }, 20_000);
});
