import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "./encoder.js";
import { DEFAULT_OTLP_OPTIONS, EMPTY_OTLP_JSON, otlpTraceJsonBodies, type OtlpOptions } from "./otlp-json.js";
import { sha256Hex } from "./ids.js";

/** `msg_` + a hash of the batch's generation ids: the same batch always has the same id. */
export const batchId = (batch: readonly BroadcastGeneration[]): string =>
  `msg_${sha256Hex(batch.map((g) => g.id).join("\n")).slice(0, 32)}`;

/** How one OTLP destination type differs from the others: where, how authenticated, what extra. */
export interface OtlpTarget {
  url(config: DestinationConfig): string;
  /** All request headers (the type's own plus the user's), content type excluded. */
  headers(config: DestinationConfig): Record<string, string>;
  method?(config: DestinationConfig): "POST" | "PUT";
  /** Attribute options; may depend on the config (Arize's project is `modelId`). */
  options?(config: DestinationConfig): Partial<OtlpOptions>;
  maxBatch?: number;
  /** A header naming the batch deterministically (the webhook's `webhook-id`), for receiver dedup. */
  batchIdHeader?: string;
  /** Largest body per request; bigger batches are split (New Relic accepts 1 MB). */
  maxBytes?: number;
  /** Send-time signing (the webhook's Standard Webhooks signature); see DestinationEncoder.sign. */
  sign?: DestinationEncoder<DestinationConfig>["sign"];
}

/**
 * Batch limits of the OTLP types (docs/broadcast.md "Batch sizes"). OTLP/HTTP defines no span
 * count limit (the OpenTelemetry Collector's batch processor itself sends 8,192 spans by
 * default); receivers limit the body instead, so a request carries up to 1,000 generations and
 * is packed into bodies of at most 4 MB (New Relic: 1 MB), the smallest common receiver default
 * (gRPC's 4 MiB message limit, which OTLP backends commonly keep for HTTP too).
 */
export const OTLP_MAX_BATCH = 1_000;
export const OTLP_MAX_BYTES = 4_000_000;

export function otlpEncoder(target: OtlpTarget): DestinationEncoder<DestinationConfig> {
  const request = (
    config: DestinationConfig,
    body: string | Uint8Array,
    extra: Record<string, string> = {},
  ): EncodedRequest => ({
    method: target.method?.(config) ?? "POST",
    url: target.url(config),
    headers: { ...target.headers(config), ...extra, "content-type": "application/json" },
    body,
  });
  return {
    maxBatch: target.maxBatch ?? OTLP_MAX_BATCH,
    encode: (batch, config) => {
      const options: OtlpOptions = { ...DEFAULT_OTLP_OPTIONS, ...target.options?.(config) };
      return otlpTraceJsonBodies(batch, options, target.maxBytes ?? OTLP_MAX_BYTES).map(({ part, body }) => ({
        ...request(config, body, target.batchIdHeader ? { [target.batchIdHeader]: batchId(part) } : {}),
        generationIds: part.map((g) => g.id),
      }));
    },
    testRequest: (config) => request(config, EMPTY_OTLP_JSON, { "x-test-connection": "true" }),
    ...(target.sign ? { sign: target.sign } : {}),
  };
}
