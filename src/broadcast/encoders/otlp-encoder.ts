import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import type { DestinationEncoder, EncodedRequest } from "./encoder.js";
import { DEFAULT_OTLP_OPTIONS, EMPTY_OTLP_JSON, otlpTraceJson, type OtlpOptions } from "./otlp-json.js";
import { splitBySize } from "./split-by-size.js";

/** How one OTLP destination type differs from the others: where, how authenticated, what extra. */
export interface OtlpTarget {
  url(config: DestinationConfig): string;
  /** All request headers (the type's own plus the user's), content type excluded. */
  headers(config: DestinationConfig): Record<string, string>;
  method?(config: DestinationConfig): "POST" | "PUT";
  /** Attribute options; may depend on the config (Arize's project is `modelId`). */
  options?(config: DestinationConfig): Partial<OtlpOptions>;
  maxBatch?: number;
  /** Largest body per request; bigger batches are split (New Relic accepts 1 MB). */
  maxBytes?: number;
}

/** OTLP/HTTP trace exports carry no documented span count limit; collectors cap bodies near 4 MB. */
const OTLP_MAX_BATCH = 100;
const OTLP_MAX_BYTES = 4_000_000;

export function otlpEncoder(target: OtlpTarget): DestinationEncoder<DestinationConfig> {
  const request = (
    config: DestinationConfig,
    body: string,
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
        otlpTraceJson(part, options),
      ).map(({ body }) => request(config, body));
    },
    testRequest: (config) => request(config, EMPTY_OTLP_JSON, { "x-test-connection": "true" }),
  };
}
