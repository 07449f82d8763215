import { createRequire } from "node:module";

/**
 * Decodes an OTLP/HTTP JSON trace export against the official opentelemetry-proto definitions
 * (the protobufjs module generated from them, shipped by @opentelemetry/otlp-transformer 0.216,
 * installed as the dev alias `otlp-proto-definitions`). The JSON is mapped to the protobuf
 * message (hex ids → bytes, as the OTLP JSON encoding specifies), encoded to binary, decoded
 * again and compared with the input: a field the protocol does not define, or a value of the
 * wrong type, does not survive the round trip and fails the check.
 */
const require = createRequire(import.meta.url);

const root = require("otlp-proto-definitions/build/src/generated/root.js");
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const ID_FIELDS = new Set(["traceId", "spanId", "parentSpanId"]);

function mapIds(value: unknown, convert: (s: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => mapIds(v, convert));
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] = ID_FIELDS.has(k) && typeof v === "string" ? convert(v) : mapIds(v, convert);
  return out;
}

/** Drops protobuf defaults and stringifies numbers so JSON and round-tripped forms compare. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(normalize);
  if (typeof value === "number") return value === 0 ? undefined : String(value);
  if (typeof value === "string") return value === "" || value === "0" ? undefined : value;
  if (typeof value === "boolean") return value ? true : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const n = normalize(v);
    if (n !== undefined) out[k] = n;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

export interface DecodedOtlp {
  /** The request as the official definitions read it (ids as hex, 64-bit values as strings). */
  message: any;
  /** Normalised input and round trip; equal when the JSON is a faithful OTLP message. */
  input: unknown;
  roundTrip: unknown;
}

export function decodeOtlpJson(body: string | Uint8Array): DecodedOtlp {
  const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
  const json = JSON.parse(text) as unknown;
  const proto = mapIds(json, (hex) => Buffer.from(hex, "hex").toString("base64"));
  const binary = Request.encode(Request.fromObject(proto)).finish() as Uint8Array;
  const back = Request.toObject(Request.decode(binary), { longs: String, enums: Number, bytes: String });
  const message = mapIds(back, (b64) => Buffer.from(b64, "base64").toString("hex"));
  return { message, input: normalize(json), roundTrip: normalize(message) };
}

/** The spans of a decoded request with their attributes as a plain record. */
export function spansOf(
  message: any,
): { span: any; resource: Record<string, unknown>; attrs: Record<string, unknown> }[] {
  const out: { span: any; resource: Record<string, unknown>; attrs: Record<string, unknown> }[] = [];
  for (const rs of message.resourceSpans ?? []) {
    const resource = attrRecord(rs.resource?.attributes ?? []);
    for (const ss of rs.scopeSpans ?? [])
      for (const span of ss.spans ?? [])
        out.push({ span, resource, attrs: attrRecord(span.attributes ?? []) });
  }
  return out;
}

function anyValue(v: any): unknown {
  if (v === undefined || v === null) return undefined;
  if ("stringValue" in v) return v.stringValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return v.doubleValue;
  if ("boolValue" in v) return v.boolValue;
  if ("arrayValue" in v) return (v.arrayValue.values ?? []).map(anyValue);
  return undefined;
}

export const attrRecord = (kvs: any[]): Record<string, unknown> =>
  Object.fromEntries(kvs.map((kv): [string, unknown] => [String(kv.key), anyValue(kv.value)]));
