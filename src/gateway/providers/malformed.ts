import { UpstreamError } from "./provider.js";

/**
 * A malformed answer: unparsable JSON, an event of the wrong shape, a stream that ends before its
 * last event. Before any output the gateway may still try another provider, so it is retryable;
 * after output it is not (a fallback would duplicate what the client already has).
 */
export function malformed(what: string, afterOutput: boolean): UpstreamError {
  return new UpstreamError(`upstream sent a malformed answer: ${what}`, null, !afterOutput);
}
