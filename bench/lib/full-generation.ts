import type { BroadcastGeneration } from "../../src/broadcast/encoders/encoder.js";

/** A fully populated generation (every optional group, content, two attempts, trace metadata). */
export function fullGeneration(i: number): BroadcastGeneration {
  return {
    id: `gen-${i}`,
    createdAtMs: 1_763_000_000_000 + i * 7.25,
    model: "openai/gpt-4o",
    provider: "OpenAI",
    finishReason: "stop",
    tokensPrompt: 1200,
    tokensCompletion: 340,
    tokensCached: 100,
    tokensReasoning: 20,
    latencyMs: 412,
    generationTimeMs: 1830,
    streamed: true,
    cancelled: false,
    isByok: false,
    params: { temperature: 0.7, max_tokens: 512, top_p: 0.9, seed: 42 },
    trace: { trace_name: "checkout", span_name: "agent", environment: "prod", feature: "search" },
    attempts: [
      { provider: "Azure", model: "openai/gpt-4o", status: 503, durationMs: 120 },
      { provider: "OpenAI", model: "openai/gpt-4o", status: 200, durationMs: 1700 },
    ],
    cost: { totalUsd: 0.00123, promptUsd: 0.0009, completionUsd: 0.00033, byokUsd: 0 },
    identity: {
      apiKeyName: "prod key",
      apiKeyHashPrefix: "abcd1234",
      userId: "user_1",
      externalUser: "u-77",
    },
    requestContext: { appTitle: "Shop", referer: "https://shop.example", sessionId: `s-${i % 50}` },
    content: {
      input: [
        { role: "system", content: "You are a helpful assistant. ".repeat(10) },
        {
          role: "user",
          content: [
            { type: "text", text: `Question ${i}: "quoted" \n line` },
            { type: "image_url", image_url: { url: "data:x" } },
          ],
        },
      ],
      output: 'An answer with unicode é ✓ and "quotes". '.repeat(20),
    },
  };
}
