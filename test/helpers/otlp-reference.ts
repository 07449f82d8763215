import { SpanKind, SpanStatusCode, TraceFlags, type HrTime } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { BroadcastGeneration } from "../../src/broadcast/encoders/encoder.js";
import {
  attemptAttributes,
  generationAttributes,
  wrapperAttributes,
} from "../../src/broadcast/encoders/genai-attributes.js";
import { viewOf } from "../../src/broadcast/encoders/generation-view.js";
import {
  SCOPE_NAME,
  SERVICE_NAME,
  SERVICE_VERSION,
  truncateAttributes,
  type OtlpOptions,
} from "../../src/broadcast/encoders/otlp-json.js";

/**
 * The reference rendering of a batch as OTLP/HTTP JSON: Gatehouse's span records handed to the
 * OpenTelemetry JS project's own serializer (`JsonTraceSerializer` from
 * `@opentelemetry/otlp-transformer`). This was the production path until the direct writer in
 * src/broadcast/encoders/otlp-json.ts replaced it for speed; tests and bench/experiments/otlp-encode.ts compare
 * the writer's output with this one.
 */
type ReadableSpan = Parameters<typeof JsonTraceSerializer.serializeRequest>[0][number];
type Resource = ReadableSpan["resource"];

const hrTime = (ms: number): HrTime => {
  const whole = Math.floor(ms);
  return [Math.floor(whole / 1000), (whole % 1000) * 1_000_000 + Math.round((ms - whole) * 1_000_000)];
};

function resourceOf(attributes: Record<string, unknown>): Resource {
  const resource = {
    attributes,
    merge: () => resource,
    getRawAttributes: () => Object.entries(attributes),
  } as unknown as Resource;
  return resource;
}

function spansOf(g: BroadcastGeneration, opts: OtlpOptions): ReadableSpan[] {
  const v = viewOf(g);
  const resource = resourceOf({
    "service.name": SERVICE_NAME,
    "service.version": SERVICE_VERSION,
    "openrouter.trace.id": g.id,
    ...opts.resourceAttributes?.(v),
  });
  return v.spans.map((span): ReadableSpan => {
    const base =
      span.role === "generation"
        ? generationAttributes(v, opts)
        : span.role === "attempt"
          ? attemptAttributes(v, span, opts)
          : wrapperAttributes(v);
    const attributes = truncateAttributes(
      { ...base, ...opts.spanAttributes?.(v, span) },
      opts.maxValueLength,
    );
    const ctx = { traceId: v.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED };
    return {
      name: span.name,
      kind: span.role === "wrapper" ? SpanKind.INTERNAL : SpanKind.CLIENT,
      spanContext: () => ctx,
      parentSpanContext:
        span.parentSpanId === null
          ? undefined
          : { traceId: v.traceId, spanId: span.parentSpanId, traceFlags: TraceFlags.SAMPLED },
      startTime: hrTime(span.startMs),
      endTime: hrTime(span.endMs),
      duration: hrTime(span.endMs - span.startMs),
      status: span.error ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.UNSET },
      attributes,
      links: [],
      events: [],
      ended: true,
      resource,
      instrumentationScope: { name: SCOPE_NAME },
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  });
}

/** The ExportTraceServiceRequest JSON bytes otlp-transformer produces for the batch. */
export function referenceOtlpJsonBytes(batch: readonly BroadcastGeneration[], opts: OtlpOptions): Uint8Array {
  const bytes = JsonTraceSerializer.serializeRequest(batch.flatMap((g) => spansOf(g, opts)));
  if (bytes === undefined) throw new Error("otlp-transformer returned no bytes");
  return bytes;
}
