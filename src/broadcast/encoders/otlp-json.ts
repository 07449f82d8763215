import { SpanKind, SpanStatusCode, TraceFlags, type HrTime } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { BroadcastGeneration } from "./encoder.js";
import {
  attemptAttributes,
  generationAttributes,
  wrapperAttributes,
  type AttributeOptions,
  type Attrs,
} from "./genai-attributes.js";
import { viewOf, type GenerationView, type SpanView } from "./generation-view.js";

/**
 * OTLP/HTTP JSON (`ExportTraceServiceRequest`) through the OpenTelemetry JS project's own encoder
 * (`JsonTraceSerializer` from `@opentelemetry/otlp-transformer`): Gatehouse builds read-only span
 * records and the library does the protocol mapping (hex ids, nanosecond strings, AnyValue).
 */
type ReadableSpan = Parameters<typeof JsonTraceSerializer.serializeRequest>[0][number];
type Resource = ReadableSpan["resource"];

/** What Gatehouse sends as `service.name`: the hosted original's value, which receivers filter on. */
export const SERVICE_NAME = "openrouter";
export const SERVICE_VERSION = "1.0.0";
export const SCOPE_NAME = "openrouter";

export interface OtlpOptions extends AttributeOptions {
  /** Extra resource attributes (Arize: `openinference.project.name`). */
  resourceAttributes?: (v: GenerationView) => Attrs;
  /** Extra attributes on a span (Langfuse and OpenInference directives). */
  spanAttributes?: (v: GenerationView, span: SpanView) => Attrs;
  /** Longest string attribute value; longer values are cut (New Relic: 4095). */
  maxValueLength?: number;
}

export const DEFAULT_OTLP_OPTIONS: OtlpOptions = { metadataPrefix: "trace.metadata." };

const hrTime = (ms: number): HrTime => {
  const whole = Math.floor(ms);
  return [Math.floor(whole / 1000), (whole % 1000) * 1_000_000 + Math.round((ms - whole) * 1_000_000)];
};

function truncate(attrs: Attrs, max: number | undefined): Attrs {
  if (max === undefined) return attrs;
  const out: Attrs = {};
  for (const [key, value] of Object.entries(attrs)) {
    out[key] =
      typeof value === "string" && value.length > max
        ? value.slice(0, max)
        : Array.isArray(value)
          ? value.slice(0, 64).map((s) => s.slice(0, max))
          : value;
  }
  return out;
}

function resourceOf(attributes: Attrs): Resource {
  const resource: Resource = {
    attributes,
    merge: () => resource,
    getRawAttributes: () => Object.entries(attributes),
  };
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
    const attributes = truncate({ ...base, ...opts.spanAttributes?.(v, span) }, opts.maxValueLength);
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

/**
 * The ExportTraceServiceRequest JSON for a batch (one resource per generation), as the UTF-8
 * bytes the serializer produces. Sent as is: decoding them back to a string (and the HTTP client
 * encoding it again) cost more than building the request (docs/performance.md "Broadcast").
 */
export function otlpTraceJsonBytes(batch: readonly BroadcastGeneration[], opts: OtlpOptions): Uint8Array {
  const bytes = JsonTraceSerializer.serializeRequest(batch.flatMap((g) => spansOf(g, opts)));
  if (bytes === undefined) throw new Error("otlp-transformer returned no bytes");
  return bytes;
}

/** The same request as a string. */
export const otlpTraceJson = (batch: readonly BroadcastGeneration[], opts: OtlpOptions): string =>
  Buffer.from(otlpTraceJsonBytes(batch, opts)).toString("utf8");

/** An empty ExportTraceServiceRequest: what connection tests send. */
export const EMPTY_OTLP_JSON = '{"resourceSpans":[]}';
