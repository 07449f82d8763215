import { invalid } from "../errors.js";

/** RFC 9110 field-name (token) characters. */
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** No control characters except horizontal tab: a value cannot smuggle a second header line. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const HEADER_VALUE_BAD_RE = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/**
 * Characters an HTTP header value cannot carry at all (a header is Latin-1 bytes): the HTTP client
 * refuses such a header, so every delivery and test of the destination would fail.
 */
const BEYOND_LATIN1_RE = /[\u0100-\uffff]/; // UTF-16 code units: astral characters too

export const MAX_HEADERS = 50;
export const MAX_HEADER_VALUE = 8192;

/**
 * `config.headers`: extra HTTP headers sent to the destination (authentication for OTLP
 * collectors, for example). Values are credentials: they are encrypted with the rest of the config
 * and masked on read. Names must be HTTP tokens; values must be strings without line breaks or
 * other control characters (tab aside) and without characters beyond U+00FF.
 */
export function validateHeaders(input: unknown): Record<string, string> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw invalid("config.headers: must be object");
  }
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) throw invalid(`config.headers: at most ${MAX_HEADERS} headers`);
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    const path = `config.headers.${name}`;
    if (!HEADER_NAME_RE.test(name)) throw invalid(`${path}: is not a valid HTTP header name`);
    if (typeof value !== "string") throw invalid(`${path}: must be string`);
    if (value.length > MAX_HEADER_VALUE) throw invalid(`${path}: at most ${MAX_HEADER_VALUE} characters`);
    if (HEADER_VALUE_BAD_RE.test(value)) throw invalid(`${path}: must not contain control characters`);
    if (BEYOND_LATIN1_RE.test(value))
      throw invalid(`${path}: must not contain characters beyond U+00FF (an HTTP header cannot carry them)`);
    out[name] = value;
  }
  return out;
}
