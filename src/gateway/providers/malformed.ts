import { UpstreamError } from "./provider.js";

/**
 * A malformed answer: unparsable JSON, an event of the wrong shape, a stream that ends before its
 * last event. Before any output the gateway may still try another provider, so it is retryable;
 * after output it is not (a fallback would duplicate what the client already has).
 */
export function malformed(what: string, afterOutput: boolean): UpstreamError {
  return new UpstreamError(`upstream sent a malformed answer: ${what}`, null, !afterOutput);
}

/**
 * A page from a proxy or load balancer between Gatehouse and the provider: its markup tells a
 * client nothing and may name hosts of the network the provider sits in, so it is named, never
 * quoted.
 */
export const looksLikeHtml = (text: string): boolean => /^\s*</.test(text);

/** An answer body that is not JSON: its start quoted, or an HTML page named as one. */
export function notJson(text: string, afterOutput: boolean): UpstreamError {
  const what = looksLikeHtml(text)
    ? "an HTML page, not JSON (from a proxy in between?)"
    : `not JSON (${JSON.stringify(text.slice(0, 80))})`;
  return malformed(what, afterOutput);
}
