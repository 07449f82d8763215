import { configFields, type DestinationType } from "../../domain/destinations/destination-types.js";
import type { DestinationConfig } from "../../domain/destinations/validate-config.js";

/**
 * Reads a validated config. Validation already filled defaults in; the registry default is used
 * again here so an encoder never sends "undefined" if a caller passes a raw config.
 */
export function field(type: DestinationType, config: DestinationConfig, name: string): string {
  const value = config[name];
  if (typeof value === "string" && value !== "") return value;
  const def = configFields(type).find((f) => f.name === name);
  if (def?.default !== undefined) return def.default;
  if (def !== undefined && !def.required) return "";
  throw new Error(`${type} config: ${name} is missing`);
}

/** An optional field: "" when unset. */
export const optional = (config: DestinationConfig, name: string): string => {
  const value = config[name];
  return typeof value === "string" ? value : "";
};

/**
 * The request headers: the type's own (content type, authentication) plus the user's
 * `config.headers`. Names are lower-cased; on a clash the type's own header wins, so a user header
 * can add to a request but not replace its authentication.
 */
export function headersFor(config: DestinationConfig, own: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers ?? {})) out[name.toLowerCase()] = value;
  for (const [name, value] of Object.entries(own)) out[name.toLowerCase()] = value;
  return out;
}

/** A base URL without its trailing slashes, so `${base}/path` never doubles them. */
export const trimBase = (url: string): string => url.replace(/\/+$/, "");

export const basicAuth = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`;

export const JSON_HEADERS = { "content-type": "application/json" } as const;
