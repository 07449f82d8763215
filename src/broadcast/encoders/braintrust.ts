import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import { field, headersFor, trimBase } from "./config-access.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "./encoder.js";
import { viewOf } from "./generation-view.js";
import { splitBySize } from "./split-by-size.js";

/**
 * Braintrust project logs insert (`POST {baseUrl}/v1/project_logs/{projectId}/insert`, Bearer key):
 * `{events:[...]}`, one event per span. Event `id`s derive from the generation, and Braintrust
 * upserts by id, so a retried batch replaces rather than duplicates.
 */
const MAX_BYTES = 6_000_000;

function eventsOf(g: BroadcastGeneration): Record<string, unknown>[] {
  const v = viewOf(g);
  const rootSpanId = v.spans[0]!.spanId;
  /** A caller's external parent span is not in Braintrust; only links within this trace are kept. */
  const ownIds = new Set(v.spans.map((s) => s.spanId));
  return v.spans.map((span) => {
    const isGeneration = span.role === "generation";
    const event: Record<string, unknown> = {
      id: `${g.id}:${span.role === "attempt" ? `attempt-${span.attempt!.index}` : span.role}`,
      span_id: span.spanId,
      root_span_id: rootSpanId,
      span_attributes: { name: span.name, type: isGeneration ? "llm" : "task" },
      created: new Date(span.startMs).toISOString(),
      metrics: { start: span.startMs / 1000, end: span.endMs / 1000 },
    };
    if (span.parentSpanId !== null && ownIds.has(span.parentSpanId)) event.span_parents = [span.parentSpanId];
    if (isGeneration) {
      event.metadata = {
        ...v.metadata,
        model: g.model,
        provider: g.provider,
        generation_id: g.id,
        trace_id: v.traceId,
        finish_reason: v.finishReason,
        is_byok: g.isByok,
        ...(v.userId !== null ? { user_id: v.userId } : {}),
        ...(v.sessionId !== null ? { session_id: v.sessionId } : {}),
        ...(g.params !== null ? { params: g.params } : {}),
      };
      const metrics = event.metrics as Record<string, number>;
      metrics.prompt_tokens = g.tokensPrompt;
      metrics.completion_tokens = g.tokensCompletion;
      metrics.tokens = g.tokensPrompt + g.tokensCompletion;
      if (g.tokensCached > 0) metrics.prompt_cached_tokens = g.tokensCached;
      if (g.tokensReasoning > 0) metrics.completion_reasoning_tokens = g.tokensReasoning;
      if (g.streamed) metrics.time_to_first_token = g.latencyMs / 1000;
      if (g.cost) metrics.estimated_cost = g.cost.totalUsd;
      if (v.input !== null) {
        event.input = v.input;
        event.output = [{ role: "assistant", content: v.output ?? "" }];
      }
    } else if (span.attempt) {
      event.metadata = {
        attempt_index: span.attempt.index,
        status_code: span.attempt.status,
        provider: span.attempt.provider,
      };
    }
    if (span.error) event.error = span.attempt?.status != null ? `HTTP ${span.attempt.status}` : "error";
    return event;
  });
}

const request = (config: DestinationConfig, body: string): EncodedRequest => ({
  method: "POST",
  url: `${trimBase(field("braintrust", config, "baseUrl"))}/v1/project_logs/${encodeURIComponent(field("braintrust", config, "projectId"))}/insert`,
  headers: headersFor(config, {
    authorization: `Bearer ${field("braintrust", config, "apiKey")}`,
    "content-type": "application/json",
  }),
  body,
});

export const braintrustEncoder: DestinationEncoder<DestinationConfig> = {
  maxBatch: 100,
  encode: (batch, config) =>
    splitBySize(batch, MAX_BYTES, (part) => JSON.stringify({ events: part.flatMap(eventsOf) })).map((p) => ({
      ...request(config, p.body),
      generationIds: p.part.map((g) => g.id),
    })),
  testRequest: (config) => request(config, JSON.stringify({ events: [] })),
};
