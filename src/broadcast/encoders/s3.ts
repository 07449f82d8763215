import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import { field, optional, trimBase } from "./config-access.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "./encoder.js";
import { viewOf } from "./generation-view.js";
import { warehouseRows } from "./warehouse-rows.js";

/**
 * Amazon S3 (and S3-compatible stores through `endpoint`): one JSON object per trace, written by
 * `PutObject` at `{pathTemplate}/{traceId}-{timestamp}.json` (timestamp in seconds; the trace is
 * the generation, whose id the hosted original reports as `openrouter.trace.id`). The key is
 * deterministic, so a retry overwrites the same object. Requests are encoded unsigned; `sign`
 * adds SigV4 at send time because a signature embeds the time.
 */
const DEFAULT_REGION = "us-east-1";

/** Characters kept in key segments that come from data (api key names); others become "_". */
const safeSegment = (s: string): string => s.replace(/[^A-Za-z0-9._-]/g, "_") || "_";

/** Expands `{prefix} {date} {year} {month} {day} {apiKeyName}` (UTC date of the generation). */
export function s3ObjectKey(g: BroadcastGeneration, config: DestinationConfig): string {
  const d = new Date(g.createdAtMs);
  const year = String(d.getUTCFullYear());
  const month = String(d.getUTCMonth() + 1).padStart(2, "0");
  const day = String(d.getUTCDate()).padStart(2, "0");
  const vars: Record<string, string> = {
    prefix: field("s3", config, "prefix"),
    date: `${year}-${month}-${day}`,
    year,
    month,
    day,
    apiKeyName: safeSegment(g.identity?.apiKeyName ?? "unknown"),
  };
  const dir = field("s3", config, "pathTemplate")
    .replace(/\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole)
    .replace(/^\/+|\/+$/g, "");
  const file = `${safeSegment(g.id)}-${Math.floor(g.createdAtMs / 1000)}.json`;
  return dir === "" ? file : `${dir}/${file}`;
}

/**
 * S3 keys are URL-encoded per segment; "/" separates segments. S3 checks SigV4 against the path
 * with every byte but `A-Z a-z 0-9 - _ . ~` percent-encoded, so the characters
 * encodeURIComponent leaves as they are (`! ' ( ) *`) are encoded too: sent raw, a prefix such as
 * "traces (prod)" signed a different path and every PUT was refused (SignatureDoesNotMatch).
 */
const encodeSegment = (segment: string): string =>
  encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const encodeKey = (key: string): string => key.split("/").map(encodeSegment).join("/");

/** A bucket name that is one DNS label: S3's certificate covers `{bucket}.s3.{region}.amazonaws.com`. */
const VIRTUAL_HOSTABLE = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/**
 * Virtual-hosted style on AWS; path style (`{endpoint}/{bucket}/{key}`) on a custom endpoint, and
 * on AWS (`https://s3.{region}.amazonaws.com/{bucket}/{key}`) for a bucket name that is not one DNS
 * label: S3's wildcard certificate `*.s3.{region}.amazonaws.com` does not cover a name with a dot
 * (`traces.example.com`), so TLS refused the virtual host (AWS's own SDKs switch to path style too).
 */
export function s3ObjectUrl(config: DestinationConfig, key: string): string {
  const bucket = field("s3", config, "bucketName");
  const endpoint = optional(config, "endpoint");
  if (endpoint !== "") return `${trimBase(endpoint)}/${encodeURIComponent(bucket)}/${encodeKey(key)}`;
  const region = optional(config, "region") || DEFAULT_REGION;
  if (!VIRTUAL_HOSTABLE.test(bucket)) {
    return `https://s3.${region}.amazonaws.com/${encodeURIComponent(bucket)}/${encodeKey(key)}`;
  }
  return `https://${bucket}.s3.${region}.amazonaws.com/${encodeKey(key)}`;
}

/**
 * The object: the trace with its observations (docs/broadcast.md "Native APIs", s3 row). The custom
 * `trace` keys are the trace's `metadata` and, as the hosted original documents, each
 * observation's `metadata` too.
 */
function objectOf(g: BroadcastGeneration): string {
  const v = viewOf(g);
  return JSON.stringify({
    id: g.id,
    traceId: v.traceId,
    name: v.traceName,
    timestamp: new Date(g.createdAtMs).toISOString(),
    userId: v.userId,
    sessionId: v.sessionId,
    metadata: v.metadata,
    observations: warehouseRows(g).map((r) => ({
      id: r.SPAN_ID,
      parentObservationId: r.PARENT_SPAN_ID,
      type: r.SPAN_TYPE,
      name: r.NAME,
      metadata: JSON.parse(r.METADATA) as unknown,
      startTime: new Date(r.TIMESTAMP).toISOString(),
      endTime: new Date(r.TIMESTAMP + r.DURATION_MS).toISOString(),
      durationMs: r.DURATION_MS,
      level: r.LEVEL,
      status: r.STATUS,
      model: r.MODEL,
      provider: r.PROVIDER_NAME,
      finishReason: r.FINISH_REASON,
      usage: { input: r.PROMPT_TOKENS, output: r.COMPLETION_TOKENS, total: r.TOTAL_TOKENS },
      costUsd: r.TOTAL_COST,
      attributes: JSON.parse(r.ATTRIBUTES) as unknown,
      modelParameters: r.MODEL_PARAMETERS === null ? null : (JSON.parse(r.MODEL_PARAMETERS) as unknown),
      input: r.INPUT === null ? null : (JSON.parse(r.INPUT) as unknown),
      output: r.OUTPUT === null ? null : (JSON.parse(r.OUTPUT) as unknown),
    })),
  });
}

const put = (config: DestinationConfig, key: string, body: string): EncodedRequest => ({
  method: "PUT",
  url: s3ObjectUrl(config, key),
  headers: { ...lowerCased(config.headers ?? {}), "content-type": "application/json" },
  body,
});

const lowerCased = (h: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

/** SigV4 (service s3, unsigned-path-escaping as S3 requires) over the request as encoded. */
export async function signS3(
  request: EncodedRequest,
  config: DestinationConfig,
  now: Date,
): Promise<EncodedRequest> {
  const sessionToken = optional(config, "sessionToken");
  const region =
    optional(config, "region") || (optional(config, "endpoint") !== "" ? "auto" : DEFAULT_REGION);
  const signer = new SignatureV4({
    service: "s3",
    region,
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: true,
    credentials: {
      accessKeyId: field("s3", config, "accessKeyId"),
      secretAccessKey: field("s3", config, "secretAccessKey"),
      ...(sessionToken !== "" ? { sessionToken } : {}),
    },
  });
  const u = new URL(request.url);
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: u.protocol,
      hostname: u.hostname,
      ...(u.port !== "" ? { port: Number(u.port) } : {}),
      path: u.pathname,
      query: Object.fromEntries(u.searchParams),
      // S3 needs Content-Length on PutObject; signing it pins the body size too.
      headers: {
        ...request.headers,
        host: u.host,
        "content-length": String(Buffer.byteLength(request.body)),
      },
      body: request.body,
    },
    { signingDate: now },
  );
  return { ...request, headers: signed.headers };
}

export const s3Encoder: DestinationEncoder<DestinationConfig> = {
  /** PutObject writes one object; a batch is one request per generation. */
  maxBatch: 100,
  encode: (batch, config) =>
    batch.map((g) => ({ ...put(config, s3ObjectKey(g, config), objectOf(g)), generationIds: [g.id] })),
  /** A small marker object under the prefix: proves the bucket, region and s3:PutObject. */
  testRequest: (config) =>
    put(
      config,
      `${field("s3", config, "prefix").replace(/^\/+|\/+$/g, "")}/.gatehouse-connection-test.json`,
      "{}",
    ),
  sign: signS3,
};
