import { configFields, type DestinationType } from "./destination-types.js";
import type { DestinationConfig } from "./validate-config.js";

/**
 * Masking of config values on read (docs/api-notes.md "Observability destinations"):
 * - a secret of 16 or more characters: first 4 + "..." + last 4;
 * - a shorter non-empty one: "****..." + its last min(2, floor(length / 4)) characters, so a short
 *   secret never shows more than a quarter of itself (4..7 chars show 1, 8..15 show 2);
 * - an empty one: "****".
 */
export function maskSecret(value: string): string {
  if (value.length === 0) return "****";
  if (value.length >= 16) return `${value.slice(0, 4)}...${value.slice(-4)}`;
  const shown = Math.min(2, Math.floor(value.length / 4));
  return `****...${shown === 0 ? "" : value.slice(-shown)}`;
}

/** The scheme and the authority (up to the first `/`, `?` or `#`, as URL parsers read it). */
const AUTHORITY_RE = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/?#]*)/;

/**
 * A URL with credentials in its userinfo (`https://user:pass@host/...`) shows `****` for the user
 * and for the password; the rest of the URL is returned as stored. URLs without userinfo are
 * returned unchanged. The userinfo ends at the authority's LAST `@`, as URL parsers read it: a
 * user name that is an e-mail address (`https://alice@corp.com:pass@host`) is userinfo too, and
 * masking only up to its first `@` showed the password.
 */
export function maskUrl(value: string): string {
  const m = AUTHORITY_RE.exec(value);
  if (!m) return value;
  const [whole, scheme, authority = ""] = m;
  const at = authority.lastIndexOf("@");
  if (at < 0) return value;
  const masked = authority.slice(0, at).includes(":") ? "****:****" : "****";
  return `${scheme}${masked}${authority.slice(at)}${value.slice(whole.length)}`;
}

/** The masked form of one config field's value, as returned on read. */
export function maskField(type: DestinationType, name: string, value: string): string {
  const field = configFields(type).find((f) => f.name === name);
  if (!field) return value;
  if (field.secret) return maskSecret(value);
  if (field.check.kind === "url") return maskUrl(value);
  return value;
}

/** The config as returned on read: secrets masked, URL credentials masked, header values masked. */
export function maskConfig(type: DestinationType, config: DestinationConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(config)) {
    if (name === "headers") {
      const headers = value as Record<string, string>;
      out.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, maskSecret(v)]));
    } else {
      out[name] = maskField(type, name, value as string);
    }
  }
  return out;
}
