import type { ChatResult, ChatStreamChunk } from "@openrouter/sdk/models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../helpers/fake-upstreams/anthropic.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * A tool loop with extended thinking on an Anthropic model, as an application writes it with the
 * official SDK (retries off): the first turn's answer carries the signed thinking in
 * `reasoningDetails`; the application sends that assistant message back with the tool's result;
 * the gateway gives Anthropic the thinking blocks first in that turn, which the fake upstream
 * requires as the API does ("a final assistant message must start with a thinking block").
 * Whole and streamed first turns.
 */
let anthropic: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;
let key: string;

beforeAll(async () => {
  anthropic = await startFakeAnthropic();
  file = writeProvidersFile(
    [{ slug: "claude", kind: "anthropic", base_url: anthropic.url, api_key_env: "CLAUDE_KEY" }],
    ["thinking-tools", "ok"].map((m) => ({
      id: `claude/${m}`,
      provider: "claude",
      upstream_model: m,
      prompt_price: "0.000003",
      completion_price: "0.000015",
      max_completion_tokens: 8192,
    })),
  );
  s = await startListening({
    clock: systemClock,
    env: { GATEHOUSE_PROVIDERS_FILE: file.path, CLAUDE_KEY: FAKE_ANTHROPIC_KEY },
  });
  const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "agent", limit: 5 } });
  key = r.json<{ key: string }>().key;
});

afterAll(async () => {
  await s?.close();
  await anthropic?.close();
  file?.remove();
});

const TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "get_weather",
      parameters: { type: "object", properties: { city: { type: "string" } } },
    },
  },
];
const QUESTION = { role: "user" as const, content: "Weather in Paris?" };

describe("Anthropic thinking through a tool loop, with the SDK", () => {
  for (const stream of [false, true]) {
    it(`${stream ? "streamed" : "whole"} first turn: the second turn is accepted with the thinking sent back`, async () => {
      const sdk = s.sdk(key);
      const first = { model: "claude/thinking-tools", messages: [QUESTION], tools: TOOLS, maxTokens: 4000 };
      // The SDK's reasoning takes an effort (it has no max_tokens): high is 80 % of max_tokens.
      const reasoning = { effort: "high" as const };
      let assistant: Record<string, unknown>;
      if (!stream) {
        const res = <ChatResult>await sdk.chat.send({ chatRequest: { ...first, reasoning, stream: false } });
        const m = res.choices[0]!.message;
        expect(m.reasoningDetails).toHaveLength(2);
        assistant = {
          role: "assistant",
          content: m.content,
          toolCalls: m.toolCalls,
          reasoningDetails: m.reasoningDetails,
        };
      } else {
        const events = <AsyncIterable<ChatStreamChunk>>(
          await sdk.chat.send({ chatRequest: { ...first, reasoning, stream: true } })
        );
        const details: unknown[] = [];
        let args = "";
        let callId = "";
        for await (const c of events) {
          for (const ch of c.choices) {
            details.push(...(ch.delta.reasoningDetails ?? []));
            for (const t of ch.delta.toolCalls ?? []) {
              callId ||= t.id ?? "";
              args += t.function?.arguments ?? "";
            }
          }
        }
        expect(details).toHaveLength(3); // the text, its signature, the redacted block
        assistant = {
          role: "assistant",
          content: null,
          toolCalls: [{ id: callId, type: "function", function: { name: "get_weather", arguments: args } }],
          reasoningDetails: details,
        };
      }
      const second = {
        model: "claude/ok",
        messages: [QUESTION, assistant, { role: "tool", toolCallId: "toolu_03", content: "18C" }],
        tools: TOOLS,
        maxTokens: 4000,
        reasoning,
        stream: false as const,
      };
      const res = <ChatResult>await sdk.chat.send({ chatRequest: second as never });
      expect(res.choices[0]!.message.content).toBe("Hello there, friend.");
      const sent = anthropic.requests.at(-1)!.body as {
        thinking: unknown;
        messages: { content: { type: string }[] }[];
      };
      expect(sent.thinking).toEqual({ type: "enabled", budget_tokens: 3200 });
      expect(sent.messages[1]!.content.map((b) => b.type)).toEqual([
        "thinking",
        "redacted_thinking",
        "tool_use",
      ]);
    });
  }
});
