import type { DestinationType } from "../../domain/destinations/destination-types.js";
import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import type { DestinationEncoder } from "./encoder.js";
import { OTLP_ENCODERS } from "./otlp-destinations.js";

export type { BroadcastGeneration, BroadcastMessage, DestinationEncoder, EncodedRequest } from "./encoder.js";

const ENCODERS: Partial<Record<DestinationType, DestinationEncoder<DestinationConfig>>> = {
  ...OTLP_ENCODERS,
};

/** The encoder of a destination type. Throws for a type whose encoder is not built yet. */
export function encoderFor(type: DestinationType): DestinationEncoder<DestinationConfig> {
  const encoder = ENCODERS[type];
  if (encoder === undefined) throw new Error(`broadcast: no encoder for destination type "${type}" yet`);
  return encoder;
}
