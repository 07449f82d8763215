import type { DestinationType } from "../../domain/destinations/destination-types.js";
import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import { braintrustEncoder } from "./braintrust.js";
import { clickhouseEncoder } from "./clickhouse.js";
import { datadogEncoder } from "./datadog.js";
import type { DestinationEncoder, EncodedRequest } from "./encoder.js";
import { opikEncoder } from "./opik.js";
import { OTLP_ENCODERS } from "./otlp-destinations.js";
import { posthogEncoder } from "./posthog.js";
import { s3Encoder } from "./s3.js";
import { snowflakeEncoder } from "./snowflake.js";
import { weaveEncoder } from "./weave.js";

export type { BroadcastGeneration, BroadcastMessage, DestinationEncoder, EncodedRequest } from "./encoder.js";
export { signStandardWebhook } from "./webhook-signature.js";

/** Every destination type's encoder: the compiler checks that none is missing. */
const ENCODERS: Record<DestinationType, DestinationEncoder<DestinationConfig>> = {
  ...OTLP_ENCODERS,
  datadog: datadogEncoder,
  braintrust: braintrustEncoder,
  posthog: posthogEncoder,
  weave: weaveEncoder,
  opik: opikEncoder,
  clickhouse: clickhouseEncoder,
  snowflake: snowflakeEncoder,
  s3: s3Encoder,
};

/** The encoder of a destination type. */
export function encoderFor(type: DestinationType): DestinationEncoder<DestinationConfig> {
  return ENCODERS[type];
}

/**
 * The request exactly as it goes on the wire at `now`: signed for types that sign at send time
 * (S3), unchanged otherwise. Delivery workers call this for every request they send.
 */
export async function requestToSend(
  type: DestinationType,
  request: EncodedRequest,
  config: DestinationConfig,
  now: Date,
): Promise<EncodedRequest> {
  const encoder = ENCODERS[type];
  return encoder.sign ? encoder.sign(request, config, now) : request;
}
