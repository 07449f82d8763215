import type { BroadcastGeneration } from "./encoder.js";
import {
  attemptAttributes,
  generationAttributes,
  wrapperAttributes,
  type AttributeOptions,
  type Attrs,
  type AttrValue,
} from "./genai-attributes.js";
import { viewOf, type GenerationView, type SpanView } from "./generation-view.js";

/**
 * OTLP/HTTP JSON (`ExportTraceServiceRequest`) written directly as text from the generations, in
 * the OTLP JSON mapping (the opentelemetry-proto specification, "JSON Protobuf Encoding"):
 * trace and span ids as hex, enums as integers, 64-bit nanosecond times as decimal strings,
 * lowerCamelCase keys. It produces the same JSON as the OpenTelemetry JS project's serializer
 * (`JsonTraceSerializer` of `@opentelemetry/otlp-transformer`; test/broadcast/otlp-json-writer.test.ts
 * compares them on random generations), without that serializer's intermediate object tree,
 * `JSON.stringify` of it and `TextEncoder` pass (docs/performance.md "Broadcast").
 */

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

/** String values cut to `max` characters (arrays: at most 64 values, each cut). */
export function truncateAttributes(attrs: Attrs, max: number | undefined): Attrs {
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

/** `SpanKind` + 1 (the proto enum has UNSPECIFIED = 0): INTERNAL = 1, CLIENT = 3. */
const KIND_INTERNAL = 1;
const KIND_CLIENT = 3;
/** `Status.code`: UNSET = 0, ERROR = 2. */
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;
/** Span `flags`: W3C trace flags SAMPLED (0x01) + CONTEXT_HAS_IS_REMOTE (0x100), parent not remote. */
const SPAN_FLAGS = 0x101;

const NS_PER_S = 1_000_000_000;

/**
 * Milliseconds since the epoch as the OTLP fixed64 nanoseconds, a decimal string: the whole
 * milliseconds exactly, the fraction rounded to the nanosecond (the same split into seconds and
 * nanoseconds as OpenTelemetry's `HrTime`).
 */
export function unixNanos(ms: number): string {
  const whole = Math.floor(ms);
  const seconds = Math.floor(whole / 1000);
  const nanos = (whole % 1000) * 1_000_000 + Math.round((ms - whole) * 1_000_000);
  if (seconds >= 1 && nanos >= 0 && nanos < NS_PER_S && Number.isSafeInteger(seconds)) {
    return `${seconds}${String(nanos).padStart(9, "0")}`;
  }
  return (BigInt(Math.trunc(seconds)) * BigInt(NS_PER_S) + BigInt(Math.trunc(nanos))).toString();
}

/**
 * `{"key":<key>,"value":` per attribute key: keys repeat on every span, so they are kept (at most
 * 4,096 keys of at most 128 characters: custom metadata keys come from callers).
 */
const KEY_HEADS = new Map<string, string>();
const KEY_HEADS_MAX = 4_096;
const KEY_CACHED_LENGTH = 128;

function keyHead(key: string): string {
  let head = KEY_HEADS.get(key);
  if (head === undefined) {
    head = `{"key":${JSON.stringify(key)},"value":`;
    if (KEY_HEADS.size < KEY_HEADS_MAX && key.length <= KEY_CACHED_LENGTH) KEY_HEADS.set(key, head);
  }
  return head;
}

/** 2^63: the first integer an OTLP `intValue` (int64) cannot hold. */
const INT64_LIMIT = 2 ** 63;

/** Whether a number is an integer an OTLP `intValue` can carry. */
export const isInt64 = (n: number): boolean => Number.isInteger(n) && n < INT64_LIMIT && n >= -INT64_LIMIT;
/**
 * Writes one request as a single growing string (V8 concatenates in O(1) and flattens once, when
 * the text is encoded). Long string values repeat within a generation (the input and output are
 * sent under several compatibility keys), so their JSON escaping is done once per generation.
 */
class OtlpJsonWriter {
  out = "";
  private escaped = new Map<string, string>();

  /** A JSON string literal; values of 64+ characters are escaped once per generation. */
  private str(value: string): string {
    if (value.length < 64) return JSON.stringify(value);
    let quoted = this.escaped.get(value);
    if (quoted === undefined) {
      quoted = JSON.stringify(value);
      this.escaped.set(value, quoted);
    }
    return quoted;
  }

  /**
   * An `AnyValue`: integers as `intValue`, other numbers as `doubleValue`. An integer beyond
   * int64 (a request's `seed` of 2^64 - 1, say) is a `doubleValue`: as an `intValue` it is out of
   * range ("1e+21" is not even an integer literal), and receivers refuse the whole request.
   */
  private anyValue(value: AttrValue): void {
    switch (typeof value) {
      case "string":
        this.out += `{"stringValue":${this.str(value)}}`;
        return;
      case "number":
        this.out += isInt64(value)
          ? `{"intValue":${JSON.stringify(value)}}`
          : `{"doubleValue":${JSON.stringify(value)}}`;
        return;
      case "boolean":
        this.out += value ? '{"boolValue":true}' : '{"boolValue":false}';
        return;
      default:
        this.out += '{"arrayValue":{"values":[';
        value.forEach((item, i) => {
          if (i > 0) this.out += ",";
          this.anyValue(item);
        });
        this.out += "]}}";
    }
  }

  /** A `KeyValue` list, in the object's key order. */
  private keyValues(attrs: Attrs): void {
    this.out += "[";
    let first = true;
    for (const key in attrs) {
      const head = keyHead(key);
      this.out += first ? head : `,${head}`;
      first = false;
      this.anyValue(attrs[key] as AttrValue);
      this.out += "}";
    }
    this.out += "]";
  }

  private span(v: GenerationView, span: SpanView, opts: OtlpOptions): void {
    const base =
      span.role === "generation"
        ? generationAttributes(v, opts)
        : span.role === "attempt"
          ? attemptAttributes(v, span, opts)
          : wrapperAttributes(v);
    const extra = opts.spanAttributes?.(v, span);
    const attrs = truncateAttributes(extra === undefined ? base : { ...base, ...extra }, opts.maxValueLength);
    const parent = span.parentSpanId === null ? "" : `"parentSpanId":"${span.parentSpanId}",`;
    this.out +=
      `{"traceId":"${v.traceId}","spanId":"${span.spanId}",${parent}"name":${this.str(span.name)},` +
      `"kind":${span.role === "wrapper" ? KIND_INTERNAL : KIND_CLIENT},` +
      `"startTimeUnixNano":"${unixNanos(span.startMs)}","endTimeUnixNano":"${unixNanos(span.endMs)}",` +
      `"attributes":`;
    this.keyValues(attrs);
    this.out +=
      `,"droppedAttributesCount":0,"events":[],"droppedEventsCount":0,` +
      `"status":{"code":${span.error ? STATUS_ERROR : STATUS_UNSET}},"links":[],"droppedLinksCount":0,` +
      `"flags":${SPAN_FLAGS}}`;
  }

  /** One `ResourceSpans` per generation: its resource, then its spans under the one scope. */
  resourceSpans(g: BroadcastGeneration, opts: OtlpOptions): void {
    this.escaped.clear();
    const v = viewOf(g);
    this.out += '{"resource":{"attributes":';
    this.keyValues({
      "service.name": SERVICE_NAME,
      "service.version": SERVICE_VERSION,
      "openrouter.trace.id": g.id,
      ...opts.resourceAttributes?.(v),
    });
    this.out += `,"droppedAttributesCount":0},"scopeSpans":[{"scope":{"name":${JSON.stringify(SCOPE_NAME)}},"spans":[`;
    v.spans.forEach((span, i) => {
      if (i > 0) this.out += ",";
      this.span(v, span, opts);
    });
    this.out += "]}]}";
  }
}

/** The ExportTraceServiceRequest JSON for a batch (one resource per generation), as text. */
export const otlpTraceJson = (batch: readonly BroadcastGeneration[], opts: OtlpOptions): string =>
  Buffer.from(otlpTraceJsonBytes(batch, opts)).toString("utf8");

const HEAD = Buffer.from('{"resourceSpans":[');
const TAIL = Buffer.from("]}");

/** One request body and the generations it carries. */
export interface OtlpBody {
  part: readonly BroadcastGeneration[];
  body: Uint8Array;
}

/**
 * The batch as requests of at most `maxBytes` each, in order: every generation is rendered once,
 * then consecutive generations are packed into a body while it fits (a generation bigger than
 * `maxBytes` on its own is still sent alone; the receiver decides). Each body's UTF-8 bytes are
 * written straight into a buffer of the exact size. Deterministic: the same batch always splits
 * the same way.
 */
export function otlpTraceJsonBodies(
  batch: readonly BroadcastGeneration[],
  opts: OtlpOptions,
  maxBytes = Infinity,
): OtlpBody[] {
  if (batch.length === 0) return [];
  const texts: string[] = [];
  const sizes: number[] = [];
  for (const g of batch) {
    const w = new OtlpJsonWriter();
    w.resourceSpans(g, opts);
    texts.push(w.out);
    sizes.push(Buffer.byteLength(w.out, "utf8"));
  }
  const frame = HEAD.length + TAIL.length;
  const out: OtlpBody[] = [];
  let from = 0;
  while (from < batch.length) {
    let to = from + 1;
    let size = frame + (sizes[from] as number);
    while (to < batch.length && size + 1 + (sizes[to] as number) <= maxBytes) {
      size += 1 + (sizes[to] as number);
      to += 1;
    }
    const body = Buffer.allocUnsafe(size);
    let at = HEAD.copy(body, 0);
    for (let i = from; i < to; i++) {
      if (i > from) body[at++] = 0x2c; // ","
      at += body.write(texts[i] as string, at, "utf8");
    }
    TAIL.copy(body, at);
    out.push({ part: batch.slice(from, to), body });
    from = to;
  }
  return out;
}

/** The whole batch as one request body (UTF-8 bytes, as sent). */
export function otlpTraceJsonBytes(batch: readonly BroadcastGeneration[], opts: OtlpOptions): Uint8Array {
  return otlpTraceJsonBodies(batch, opts)[0]?.body ?? Buffer.from('{"resourceSpans":[]}');
}

/** An empty ExportTraceServiceRequest: what connection tests send. */
export const EMPTY_OTLP_JSON = '{"resourceSpans":[]}';
