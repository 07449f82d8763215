import { configFields, type DestinationType } from "../../domain/destinations/destination-types.js";
import { maskSecret } from "../../domain/destinations/mask.js";
import type { DestinationConfig } from "../../domain/destinations/validate-config.js";

const USERINFO_RE = /(\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/?#@\s]*@/g;
const MAX_ERROR = 500;

/**
 * Headers of a sent request whose values are not credentials: left as they are in error texts.
 * Every other header the request carried (authorization in any form, vendor key headers, the
 * user's own headers) is treated as a secret.
 */
const PLAIN_HEADERS = new Set([
  "accept",
  "comet-workspace",
  "content-length",
  "content-type",
  "host",
  "langsmith-project",
  "webhook-id",
  "webhook-timestamp",
  "x-amz-content-sha256",
  "x-amz-date",
  "x-langfuse-ingestion-version",
  "x-snowflake-authorization-token-type",
  "x-test-connection",
]);

/** Credentials in a URL's userinfo, and the Basic authorization Node derives from them. */
function urlCredentials(value: string): string[] {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return [];
  }
  if (u.username === "" && u.password === "") return [];
  const user = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  return [Buffer.from(`${user}:${password}`, "utf8").toString("base64"), password];
}

/**
 * An error text as stored and shown: every secret of the destination's config (secret fields,
 * header values, URL credentials) replaced by its masked form wherever it appears (a receiver may
 * echo a header back), URL userinfo masked, control characters removed, at most 500 characters.
 * `sentHeaders` are the headers of the request that failed: the credentials an encoder derives
 * from the config (`Basic base64(publicKey:secretKey)`, `sentry_key=…`) are masked too.
 */
export function maskErrorText(
  text: string,
  type: DestinationType,
  config: DestinationConfig,
  sentHeaders: Readonly<Record<string, string>> = {},
): string {
  const secrets: string[] = [];
  for (const f of configFields(type)) {
    const v = (config as Record<string, unknown>)[f.name];
    if (typeof v !== "string" || v.length === 0) continue;
    if (f.secret) secrets.push(v);
    if (f.check.kind === "url") secrets.push(...urlCredentials(v));
  }
  const headers = (config as { headers?: Record<string, string> }).headers;
  if (headers) for (const v of Object.values(headers)) if (v.length > 0) secrets.push(v);
  for (const [name, v] of Object.entries(sentHeaders)) {
    if (!PLAIN_HEADERS.has(name.toLowerCase()) && v.length > 0) secrets.push(v);
  }
  // Also the parts of a secret (an "Authorization: Basic X" or "Bearer X" header's X).
  for (const s of [...secrets]) for (const part of s.split(/\s+/)) if (part.length >= 8) secrets.push(part);
  const unique = [...new Set(secrets.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
  let out = text;
  for (const s of unique) out = out.split(s).join(maskSecret(s));
  out = out.replace(USERINFO_RE, "$1****@");
  // eslint-disable-next-line no-control-regex
  out = out.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return out.length > MAX_ERROR ? `${out.slice(0, MAX_ERROR)}…` : out;
}

/** Masks a claim's error texts: its config's secrets and those of the request last sent. */
export interface ErrorMasker {
  /** The headers of a request about to be sent (credentials an encoder derived, masked too). */
  saw(headers: Readonly<Record<string, string>>): void;
  mask(text: string): string;
}

export function errorMasker(type: DestinationType, config: DestinationConfig): ErrorMasker {
  let sentHeaders: Readonly<Record<string, string>> = {};
  return {
    saw(headers) {
      sentHeaders = headers;
    },
    mask: (text) => maskErrorText(text, type, config, sentHeaders),
  };
}
