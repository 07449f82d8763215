import { isDestinationType } from "../domain/destinations/destination-types.js";
import type { EncoderLookup } from "./delivery/broadcaster.js";
import { encoderFor } from "./encoders/index.js";

/** encoderFor as a lookup that answers undefined for a type without an encoder. */
export const defaultEncoderLookup: EncoderLookup = (type) => {
  if (!isDestinationType(type)) return undefined;
  try {
    return encoderFor(type);
  } catch {
    return undefined;
  }
};
