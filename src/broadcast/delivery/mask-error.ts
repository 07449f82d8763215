import { configFields, type DestinationType } from "../../domain/destinations/destination-types.js";
import { maskSecret } from "../../domain/destinations/mask.js";
import type { DestinationConfig } from "../../domain/destinations/validate-config.js";

const USERINFO_RE = /(\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/?#@\s]*@/g;
const MAX_ERROR = 500;

/**
 * An error text as stored and shown: every secret of the destination's config (secret fields,
 * header values, URL credentials) replaced by its masked form wherever it appears (a receiver may
 * echo a header back), URL userinfo masked, control characters removed, at most 500 characters.
 */
export function maskErrorText(text: string, type: DestinationType, config: DestinationConfig): string {
  const secrets: string[] = [];
  for (const f of configFields(type)) {
    const v = (config as Record<string, unknown>)[f.name];
    if (f.secret && typeof v === "string" && v.length > 0) secrets.push(v);
  }
  const headers = (config as { headers?: Record<string, string> }).headers;
  if (headers) for (const v of Object.values(headers)) if (v.length > 0) secrets.push(v);
  // Also the parts of a secret (an "Authorization: Bearer X" header's X; basic-auth base64 is rare in echoes).
  for (const s of [...secrets]) for (const part of s.split(/\s+/)) if (part.length >= 8) secrets.push(part);
  secrets.sort((a, b) => b.length - a.length);
  let out = text;
  for (const s of secrets) out = out.split(s).join(maskSecret(s));
  out = out.replace(USERINFO_RE, "$1****@");
  // eslint-disable-next-line no-control-regex
  out = out.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return out.length > MAX_ERROR ? `${out.slice(0, MAX_ERROR)}…` : out;
}
