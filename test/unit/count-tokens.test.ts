import { describe, expect, it } from "vitest";
import {
  IMAGE_TOKENS,
  REPLY_PRIMING_TOKENS,
  TOKENS_PER_MESSAGE,
  countPromptTokens,
  countTextTokens,
} from "../../src/gateway/tokens/count-tokens.js";

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
    expect(withImage - base).toBe(IMAGE_TOKENS);
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
});
