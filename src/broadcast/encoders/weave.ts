import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import { basicAuth, field, headersFor, trimBase } from "./config-access.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "./encoder.js";
import { viewOf } from "./generation-view.js";
import { uuidV7 } from "./ids.js";
import { splitBySize } from "./split-by-size.js";

/**
 * W&B Weave's trace server: `POST {baseUrl}/call/upsert_batch` with `{batch:[{mode:"start",
 * req:{start}}, {mode:"end", req:{end}}, ...]}` (the batch form of `/call/start` + `/call/end`
 * that Weave's own client uses), Basic `api:<apiKey>`. Call ids are UUIDv7 derived from the
 * generation, so a re-sent batch rewrites the same calls.
 */
const MAX_BYTES = 30_000_000;

function itemsOf(g: BroadcastGeneration, projectId: string): Record<string, unknown>[] {
  const v = viewOf(g);
  const traceId = uuidV7(g.createdAtMs, `weave-trace:${v.traceId}`);
  const callId = (spanId: string): string => uuidV7(g.createdAtMs, `weave-call:${g.id}:${spanId}`);
  const ownIds = new Set(v.spans.map((s) => s.spanId));
  return v.spans.flatMap((span) => {
    const isGeneration = span.role === "generation";
    const start: Record<string, unknown> = {
      project_id: projectId,
      id: callId(span.spanId),
      op_name: isGeneration
        ? "openrouter.chat"
        : span.role === "attempt"
          ? "openrouter.provider_attempt"
          : "openrouter.span",
      display_name: span.name,
      trace_id: traceId,
      started_at: new Date(span.startMs).toISOString(),
      attributes: isGeneration
        ? { openrouter_trace_id: v.traceId, generation_id: g.id, provider: g.provider, ...v.metadata }
        : { attempt_index: span.attempt?.index ?? null, status_code: span.attempt?.status ?? null },
      inputs: isGeneration
        ? { model: g.model, ...(g.params ?? {}), ...(v.input !== null ? { messages: v.input } : {}) }
        : {},
    };
    if (span.parentSpanId !== null && ownIds.has(span.parentSpanId))
      start.parent_id = callId(span.parentSpanId);
    const end: Record<string, unknown> = {
      project_id: projectId,
      id: callId(span.spanId),
      ended_at: new Date(span.endMs).toISOString(),
      output:
        isGeneration && v.input !== null ? { content: v.output ?? "", finish_reason: v.finishReason } : null,
      summary: isGeneration
        ? {
            usage: {
              [g.model]: {
                requests: 1,
                prompt_tokens: g.tokensPrompt,
                completion_tokens: g.tokensCompletion,
                total_tokens: g.tokensPrompt + g.tokensCompletion,
              },
            },
          }
        : {},
    };
    if (span.error) end.exception = span.attempt?.status != null ? `HTTP ${span.attempt.status}` : "error";
    return [
      { mode: "start", req: { start } },
      { mode: "end", req: { end } },
    ];
  });
}

const send = (config: DestinationConfig, body: string): EncodedRequest => ({
  method: "POST",
  url: `${trimBase(field("weave", config, "baseUrl"))}/call/upsert_batch`,
  headers: headersFor(config, {
    authorization: basicAuth("api", field("weave", config, "apiKey")),
    "content-type": "application/json",
  }),
  body,
});

export const weaveProjectId = (config: DestinationConfig): string =>
  `${field("weave", config, "entity")}/${field("weave", config, "project")}`;

export const weaveEncoder: DestinationEncoder<DestinationConfig> = {
  maxBatch: 100,
  encode: (batch, config) => {
    const projectId = weaveProjectId(config);
    return splitBySize(batch, MAX_BYTES, (part) =>
      JSON.stringify({ batch: part.flatMap((g) => itemsOf(g, projectId)) }),
    ).map((p) => ({ ...send(config, p.body), generationIds: p.part.map((g) => g.id) }));
  },
  testRequest: (config) => send(config, JSON.stringify({ batch: [] })),
};
