import { malformed, notJson } from "../malformed.js";
import { UpstreamError } from "../provider.js";
import { isRetryableStatus } from "../upstream-http.js";

/** Reading OpenAI-compatible answers: shared by chat completions and embeddings. */

import { isObject, type Json } from "../../../lib/json-object.js";

export { isObject, type Json };

/** An answer body (or a stream event's data) as a JSON object; else a malformed-answer error. */
export function parseJson(text: string, afterOutput: boolean): Json {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw notJson(text, afterOutput);
  }
  if (!isObject(v)) throw malformed("not a JSON object", afterOutput);
  return v;
}

/** An error object sent with status 200 (in a body or as a stream event), as some servers do. */
export function inBandError(o: Json, afterOutput: boolean): UpstreamError | null {
  const e = o.error;
  if (e === undefined || e === null) return null;
  const msg = isObject(e) && typeof e.message === "string" ? e.message : typeof e === "string" ? e : "error";
  const code = isObject(e) ? Number(e.code) : NaN;
  const status = Number.isInteger(code) && code >= 400 && code < 600 ? code : null;
  const retryable = !afterOutput && (status === null || isRetryableStatus(status));
  return new UpstreamError(`upstream reported an error: ${msg.slice(0, 300)}`, status, retryable);
}
