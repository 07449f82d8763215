import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import { field, headersFor } from "./config-access.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "./encoder.js";
import { viewOf } from "./generation-view.js";
import { uuidV7 } from "./ids.js";

/**
 * Comet Opik's REST API (Opik Cloud, `https://www.comet.com/opik/api`): traces first
 * (`POST /v1/private/traces/batch`), then their spans (`POST /v1/private/spans/batch`). Opik ids
 * must be UUIDv7; they derive from the generation (timestamp = its start), so a re-sent batch
 * writes the same ids. `authorization` carries the bare API key (no "Bearer"), with
 * `Comet-Workspace`. The hosted original's own ids go in metadata.
 */
export const OPIK_BASE = "https://www.comet.com/opik/api";

const iso = (ms: number): string => new Date(ms).toISOString();

function traceOf(
  g: BroadcastGeneration,
  projectName: string,
): { trace: Record<string, unknown>; spans: Record<string, unknown>[] } {
  const v = viewOf(g);
  const traceId = uuidV7(g.createdAtMs, `opik-trace:${g.id}`);
  const spanId = (s: string): string => uuidV7(g.createdAtMs, `opik-span:${g.id}:${s}`);
  const ownIds = new Set(v.spans.map((s) => s.spanId));
  const metadata = { ...v.metadata, openrouter_trace_id: v.traceId, openrouter_observation_id: g.id };
  const trace: Record<string, unknown> = {
    id: traceId,
    project_name: projectName,
    name: v.traceName,
    start_time: iso(v.generation.startMs),
    end_time: iso(v.generation.endMs),
    metadata,
    tags: ["openrouter"],
  };
  if (v.sessionId !== null) trace.thread_id = v.sessionId;
  if (v.input !== null) {
    trace.input = { messages: v.input };
    trace.output = { content: v.output ?? "" };
  }
  const spans = v.spans.map((span) => {
    const isGeneration = span.role === "generation";
    const out: Record<string, unknown> = {
      id: spanId(span.spanId),
      trace_id: traceId,
      project_name: projectName,
      name: span.name,
      type: isGeneration ? "llm" : "general",
      start_time: iso(span.startMs),
      end_time: iso(span.endMs),
      metadata: isGeneration
        ? { ...metadata, finish_reason: v.finishReason, is_byok: g.isByok }
        : { attempt_index: span.attempt?.index ?? null, status_code: span.attempt?.status ?? null },
    };
    if (span.parentSpanId !== null && ownIds.has(span.parentSpanId))
      out.parent_span_id = spanId(span.parentSpanId);
    if (isGeneration) {
      out.model = g.model;
      out.provider = g.provider.toLowerCase();
      out.usage = {
        prompt_tokens: g.tokensPrompt,
        completion_tokens: g.tokensCompletion,
        total_tokens: g.tokensPrompt + g.tokensCompletion,
      };
      if (g.cost) out.total_estimated_cost = g.cost.totalUsd;
      if (v.input !== null) {
        out.input = { messages: v.input };
        out.output = { content: v.output ?? "" };
      }
    } else if (span.attempt) {
      out.provider = span.attempt.provider.toLowerCase();
      out.model = span.attempt.model;
    }
    if (span.error)
      out.error_info = {
        exception_type: span.attempt?.status != null ? `HTTP ${span.attempt.status}` : "error",
        traceback: "",
      };
    return out;
  });
  return { trace, spans };
}

const send = (config: DestinationConfig, path: string, body: string): EncodedRequest => ({
  method: "POST",
  url: `${OPIK_BASE}${path}`,
  headers: headersFor(config, {
    authorization: field("opik", config, "apiKey"),
    "comet-workspace": field("opik", config, "workspace"),
    "content-type": "application/json",
  }),
  body,
});

export const opikEncoder: DestinationEncoder<DestinationConfig> = {
  maxBatch: 100,
  encode: (batch, config) => {
    if (batch.length === 0) return [];
    const projectName = field("opik", config, "projectName");
    const parts = batch.map((g) => traceOf(g, projectName));
    return [
      send(config, "/v1/private/traces/batch", JSON.stringify({ traces: parts.map((p) => p.trace) })),
      send(config, "/v1/private/spans/batch", JSON.stringify({ spans: parts.flatMap((p) => p.spans) })),
    ];
  },
  testRequest: (config) => send(config, "/v1/private/traces/batch", JSON.stringify({ traces: [] })),
};
