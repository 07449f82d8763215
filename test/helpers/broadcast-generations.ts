import type { BroadcastGeneration } from "../../src/broadcast/encoders/encoder.js";

/** A fully populated generation (every optional group present) with distinctive content. */
export function sampleGeneration(overrides: Partial<BroadcastGeneration> = {}): BroadcastGeneration {
  return {
    id: "gen-1732420000-AbCdEf123456",
    createdAtMs: Date.UTC(2026, 10, 24, 6, 30, 15, 250),
    model: "openai/gpt-4o",
    provider: "OpenAI",
    finishReason: "stop",
    tokensPrompt: 120,
    tokensCompletion: 45,
    tokensCached: 20,
    tokensReasoning: 5,
    latencyMs: 310,
    generationTimeMs: 1450,
    streamed: true,
    cancelled: false,
    isByok: false,
    params: { temperature: 0.2, max_tokens: 256, top_p: 0.9 },
    trace: {
      trace_id: "checkout-flow-42",
      trace_name: "Checkout",
      generation_name: "Summarise",
      env: "prod",
    },
    attempts: [
      { provider: "Azure", model: "openai/gpt-4o", status: 503, durationMs: 120 },
      { provider: "OpenAI", model: "openai/gpt-4o", status: 200, durationMs: 1330 },
    ],
    cost: { totalUsd: 0.000765, promptUsd: 0.0003, completionUsd: 0.000465, byokUsd: 0 },
    identity: {
      apiKeyName: "prod-backend",
      apiKeyHashPrefix: "a1b2c3d4",
      userId: "user_7",
      externalUser: "customer-99",
    },
    requestContext: { appTitle: "Shop", referer: "https://shop.example", sessionId: "sess-555" },
    content: {
      input: [
        { role: "system", content: "You are terse." },
        {
          role: "user",
          content: [
            { type: "text", text: "Summarise my basket" },
            { type: "image_url", image_url: { url: "data:image/png;base64,SECRETIMAGEBYTES" } },
          ],
        },
      ],
      output: "Two apples and a pear.",
    },
    ...overrides,
  };
}

/** The same generation in privacy mode: no content group. */
export const privateGeneration = (overrides: Partial<BroadcastGeneration> = {}): BroadcastGeneration =>
  sampleGeneration({ content: null, ...overrides });

/** A minimal generation: one attempt, no optional groups, no trace. */
export const bareGeneration = (id: string, createdAtMs: number): BroadcastGeneration => ({
  id,
  createdAtMs,
  model: "anthropic/claude-sonnet-4",
  provider: "Anthropic",
  finishReason: "length",
  tokensPrompt: 10,
  tokensCompletion: 20,
  tokensCached: 0,
  tokensReasoning: 0,
  latencyMs: 200,
  generationTimeMs: null,
  streamed: false,
  cancelled: false,
  isByok: true,
  params: null,
  trace: null,
  attempts: [{ provider: "Anthropic", model: "anthropic/claude-sonnet-4", status: 200, durationMs: 200 }],
  cost: null,
  identity: null,
  requestContext: null,
  content: null,
});
