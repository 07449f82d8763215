import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "./encoder.js";
import { DEFAULT_OTLP_OPTIONS, EMPTY_OTLP_JSON, otlpTraceJsonBytes, type OtlpOptions } from "./otlp-json.js";
import { sha256Hex } from "./ids.js";
import { splitBySize } from "./split-by-size.js";

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
}

/** OTLP/HTTP trace exports carry no documented span count limit; collectors cap bodies near 4 MB. */
const OTLP_MAX_BATCH = 100;
const OTLP_MAX_BYTES = 4_000_000;

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
      return splitBySize(batch, target.maxBytes ?? OTLP_MAX_BYTES, (part) =>
        otlpTraceJsonBytes(part, options),
      ).map(({ part, body }) =>
        request(config, body, target.batchIdHeader ? { [target.batchIdHeader]: batchId(part) } : {}),
      );
    },
    testRequest: (config) => request(config, EMPTY_OTLP_JSON, { "x-test-connection": "true" }),
  };
}
