import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "../encoders/encoder.js";
import type { Failure } from "./outcomes.js";

/**
 * The encode stage of a delivery (claim → encode → send → outcomes → settle): the claim's
 * generations as the destination's requests, or why they could not be encoded (not retried: the
 * same generations would fail again).
 */
export function encodeClaim(
  encoder: DestinationEncoder,
  generations: BroadcastGeneration[],
  config: DestinationConfig,
): { requests: EncodedRequest[]; failure: Failure | null } {
  if (generations.length === 0) return { requests: [], failure: null };
  try {
    return { requests: encoder.encode(generations, config), failure: null };
  } catch (err) {
    const text = `encode: ${err instanceof Error ? err.message : String(err)}`;
    return { requests: [], failure: { text, retry: false, retryAfterMs: null } };
  }
}
