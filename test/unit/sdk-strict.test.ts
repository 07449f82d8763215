import { OpenRouter } from "@openrouter/sdk";
import { SDKValidationError } from "@openrouter/sdk/models/errors";
import { ChatRequest$outboundSchema, ChatResult$inboundSchema } from "@openrouter/sdk/models";
import { UpdateKeysRequest$outboundSchema } from "@openrouter/sdk/models/operations";
import { describe, expect, it } from "vitest";
import "../helpers/sdk-strict.js";

// test/helpers/sdk-strict.ts: the SDK's request schemas refuse the keys they would drop.
describe("the tests' SDK refuses a request key it does not know", () => {
  const messages = [{ role: "user" as const, content: "hi" }];

  it("at the top of a chat request: max_tokens is refused, maxTokens is sent as max_tokens", () => {
    const bad = ChatRequest$outboundSchema.safeParse({ model: "m", messages, max_tokens: 5 });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain('"keys":["max_tokens"]');
    expect(ChatRequest$outboundSchema.parse({ model: "m", messages, maxTokens: 5 })).toMatchObject({
      max_tokens: 5,
    });
  });

  it("inside a message (a union member that is an intersection)", () => {
    const assistant = { role: "assistant" as const, content: "x" };
    const reasoning = [{ type: "reasoning.text", text: "t" }];
    expect(
      ChatRequest$outboundSchema.safeParse({ messages: [{ ...assistant, reasoning_details: reasoning }] })
        .success,
    ).toBe(false);
    expect(
      ChatRequest$outboundSchema.parse({ messages: [{ ...assistant, reasoningDetails: reasoning }] })
        .messages[0],
    ).toMatchObject({ reasoning_details: reasoning });
  });

  it("in an operation's body: apiKeys.update's requestBody has no expiresAt", () => {
    expect(
      UpdateKeysRequest$outboundSchema.safeParse({ hash: "h", requestBody: { name: "n" } }).success,
    ).toBe(true);
    expect(
      UpdateKeysRequest$outboundSchema.safeParse({
        hash: "h",
        requestBody: { name: "n", expiresAt: new Date() },
      }).success,
    ).toBe(false);
  });

  it("through the client, before any request is made", async () => {
    const sdk = new OpenRouter({
      apiKey: "k",
      serverURL: "http://127.0.0.1:9/api/v1",
      retryConfig: { strategy: "none" },
    });
    const chatRequest = { model: "m", messages, max_tokens: 5 };
    const err = await sdk.chat.send({ chatRequest }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SDKValidationError);
    expect(String((err as SDKValidationError).cause)).toContain('Unrecognized key: \\"max_tokens\\"');
  });

  it("leaves the response schemas lenient", () => {
    const result = {
      id: "g",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [],
      system_fingerprint: null,
      a_field_the_sdk_does_not_know: 1,
    };
    expect(ChatResult$inboundSchema.safeParse(result).success).toBe(true);
  });
});
