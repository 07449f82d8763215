import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import { field, headersFor } from "./config-access.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "./encoder.js";
import { viewOf } from "./generation-view.js";
import { splitBySize } from "./split-by-size.js";

/**
 * Datadog LLM Observability's spans intake (docs.datadoghq.com/llm_observability/instrumentation/api):
 * `POST https://api.<site>/api/intake/llm-obs/v1/trace/spans`, `DD-API-KEY`, body
 * `{data:{type:"span", attributes:{ml_app, tags, spans:[...]}}}`. The generation is an `llm` span
 * (the root's `parent_id` is the string "undefined", as documented); provider attempts are `task`
 * spans under it. Datadog rejects spans older than 24 hours and bodies over 5 MB.
 */
export const DATADOG_MAX_BYTES = 5_000_000;

/** The intake host for a configured URL: `app.` / bare site hosts become `api.<site>`. */
export function datadogIntakeUrl(config: DestinationConfig): string {
  const u = new URL(field("datadog", config, "url"));
  let host = u.hostname;
  if (host.startsWith("app.")) host = host.slice(4);
  if (!host.startsWith("api.")) host = `api.${host}`;
  const port = u.port === "" ? "" : `:${u.port}`;
  return `${u.protocol}//${host}${port}/api/intake/llm-obs/v1/trace/spans`;
}

const nanos = (ms: number): number => Math.round(ms * 1_000_000);

function spansOf(g: BroadcastGeneration, mlApp: string): Record<string, unknown>[] {
  const v = viewOf(g);
  const tags = [`service:${mlApp}`, `model:${g.model}`, `provider:${g.provider}`, "source:gatehouse"];
  if (v.userId !== null) tags.push(`user_id:${v.userId}`);
  if (g.identity?.apiKeyName) tags.push(`api_key_name:${g.identity.apiKeyName}`);
  return v.spans.map((span) => {
    const isGeneration = span.role === "generation";
    const meta: Record<string, unknown> = {
      kind: isGeneration ? "llm" : span.role === "wrapper" ? "workflow" : "task",
    };
    if (isGeneration) {
      meta.model_name = g.model;
      meta.model_provider = g.provider.toLowerCase();
      meta.metadata = {
        ...v.metadata,
        generation_id: g.id,
        finish_reason: v.finishReason,
        is_byok: g.isByok,
        streamed: g.streamed,
        ...(g.params ?? {}),
      };
      if (v.input !== null) {
        meta.input = {
          messages: v.input.map((m) => ({
            role: m.role,
            content: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
          })),
        };
        meta.output = { messages: [{ role: "assistant", content: v.output ?? "" }] };
      }
    } else if (span.attempt) {
      meta.metadata = {
        attempt_index: span.attempt.index,
        status_code: span.attempt.status,
        provider: span.attempt.provider,
      };
    }
    if (span.error)
      meta.error = { type: span.attempt?.status != null ? `http_${span.attempt.status}` : "error" };
    const out: Record<string, unknown> = {
      trace_id: v.traceId,
      span_id: span.spanId,
      parent_id: span.parentSpanId ?? "undefined",
      name: span.name,
      start_ns: nanos(span.startMs),
      duration: nanos(span.endMs - span.startMs),
      status: span.error ? "error" : "ok",
      meta,
      tags,
    };
    if (v.sessionId !== null) out.session_id = v.sessionId;
    if (isGeneration) {
      const metrics: Record<string, number> = {
        input_tokens: g.tokensPrompt,
        output_tokens: g.tokensCompletion,
        total_tokens: g.tokensPrompt + g.tokensCompletion,
      };
      if (g.tokensCached > 0) metrics.cache_read_input_tokens = g.tokensCached;
      if (g.streamed) metrics.time_to_first_token = g.latencyMs / 1000;
      if (g.cost) metrics.total_cost = g.cost.totalUsd;
      out.metrics = metrics;
    }
    return out;
  });
}

const body = (batch: readonly BroadcastGeneration[], mlApp: string): string =>
  JSON.stringify({
    data: {
      type: "span",
      attributes: {
        ml_app: mlApp,
        tags: [`service:${mlApp}`, "source:gatehouse"],
        spans: batch.flatMap((g) => spansOf(g, mlApp)),
      },
    },
  });

const request = (config: DestinationConfig, payload: string): EncodedRequest => ({
  method: "POST",
  url: datadogIntakeUrl(config),
  headers: headersFor(config, {
    "dd-api-key": field("datadog", config, "apiKey"),
    "content-type": "application/json",
  }),
  body: payload,
});

export const datadogEncoder: DestinationEncoder<DestinationConfig> = {
  maxBatch: 100,
  encode: (batch, config) => {
    const mlApp = field("datadog", config, "mlApp");
    return splitBySize(batch, DATADOG_MAX_BYTES, (part) => body(part, mlApp)).map((p) => ({
      ...request(config, p.body),
      generationIds: p.part.map((g) => g.id),
    }));
  },
  /** An empty span list: proves the key and site without recording anything. */
  testRequest: (config) => request(config, body([], field("datadog", config, "mlApp"))),
};
