import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import { field, headersFor, trimBase } from "./config-access.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "./encoder.js";
import { viewOf } from "./generation-view.js";
import { uuidFromSeed } from "./ids.js";
import { splitBySize } from "./split-by-size.js";

/**
 * PostHog LLM analytics: one `$ai_generation` event per generation through batch capture
 * (`POST {endpoint}/batch/`, project key as `api_key` in the body). Each event's `uuid` derives
 * from the generation id, which PostHog uses to drop a re-sent event. Privacy mode (no content)
 * omits `$ai_input` and `$ai_output_choices`, as the hosted original documents.
 */
const MAX_BYTES = 20_000_000;

function eventOf(g: BroadcastGeneration): Record<string, unknown> {
  const v = viewOf(g);
  const props: Record<string, unknown> = {
    $ai_trace_id: v.traceId,
    $ai_span_id: v.generation.spanId,
    $ai_span_name: v.generation.name,
    $ai_generation_id: g.id,
    $ai_model: g.model,
    $ai_provider: g.provider.toLowerCase(),
    $ai_input_tokens: g.tokensPrompt,
    $ai_output_tokens: g.tokensCompletion,
    $ai_cache_read_input_tokens: g.tokensCached,
    $ai_reasoning_tokens: g.tokensReasoning,
    $ai_latency: (v.generation.endMs - v.generation.startMs) / 1000,
    $ai_stream: g.streamed,
    $ai_is_error: v.generation.error,
    trace_name: v.traceName,
  };
  if (v.generation.parentSpanId !== null) props.$ai_parent_id = v.generation.parentSpanId;
  const status = g.attempts.at(-1)?.status;
  if (status != null) props.$ai_http_status = status;
  if (g.streamed) props.$ai_time_to_first_token = g.latencyMs / 1000;
  if (v.sessionId !== null) props.$ai_session_id = v.sessionId;
  if (g.params !== null) props.$ai_model_parameters = g.params;
  if (g.cost) {
    props.$ai_total_cost_usd = g.cost.totalUsd;
    if (g.cost.promptUsd !== null) props.$ai_input_cost_usd = g.cost.promptUsd;
    if (g.cost.completionUsd !== null) props.$ai_output_cost_usd = g.cost.completionUsd;
  }
  for (const [key, value] of Object.entries(v.metadata)) props[`metadata_${key}`] = value;
  if (v.input !== null) {
    props.$ai_input = v.input;
    props.$ai_output_choices = [{ role: "assistant", content: v.output ?? "" }];
  }
  // Without a user the event belongs to no person: PostHog's documented way is to skip the profile.
  if (v.userId === null) props.$process_person_profile = false;
  return {
    event: "$ai_generation",
    uuid: uuidFromSeed(`posthog:${g.id}`),
    distinct_id: v.userId ?? v.traceId,
    timestamp: new Date(g.createdAtMs).toISOString(),
    properties: props,
  };
}

const request = (config: DestinationConfig, batch: readonly BroadcastGeneration[]): string =>
  JSON.stringify({ api_key: field("posthog", config, "apiKey"), batch: batch.map(eventOf) });

const send = (config: DestinationConfig, body: string): EncodedRequest => ({
  method: "POST",
  url: `${trimBase(field("posthog", config, "endpoint"))}/batch/`,
  headers: headersFor(config, { "content-type": "application/json" }),
  body,
});

export const posthogEncoder: DestinationEncoder<DestinationConfig> = {
  maxBatch: 100,
  encode: (batch, config) =>
    splitBySize(batch, MAX_BYTES, (part) => request(config, part)).map((p) => ({
      ...send(config, p.body),
      generationIds: p.part.map((g) => g.id),
    })),
  testRequest: (config) => send(config, request(config, [])),
};
