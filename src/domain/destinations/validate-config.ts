import { isIP } from "node:net";
import { refusedText, type OutboundPolicy } from "../../lib/outbound-policy.js";
import { invalid } from "../errors.js";
import {
  configFields,
  MAX_CONFIG_STRING,
  MIN_SECRET_LENGTH,
  type ConfigField,
  type DestinationType,
} from "./destination-types.js";
import { validateHeaders } from "./config-headers.js";

/** A validated config: the registry's string fields (defaults filled in) and optional `headers`. */
export interface DestinationConfig {
  headers?: Record<string, string>;
  [field: string]: string | Record<string, string> | undefined;
}

const isHttpUrl = (value: string): boolean => {
  try {
    const u = new URL(value);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
  } catch {
    return false;
  }
};

/**
 * C0 and C1 control characters and DEL. No config value has a use for one, and most are sent as
 * (part of) an HTTP header (keys, project and workspace names) or URL: a key pasted with its
 * newline was stored, and every delivery and test then failed before reaching the receiver.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;

/** Checks one present, non-empty value against its field's kind; returns an error text or null. */
function checkValue(field: ConfigField, value: string): string | null {
  const max = field.maxLength ?? MAX_CONFIG_STRING;
  if (value.length > max) return `at most ${max} characters`;
  if (CONTROL_RE.test(value)) return "must not contain control characters";
  if (field.secret && value.length < MIN_SECRET_LENGTH) return `at least ${MIN_SECRET_LENGTH} characters`;
  const c = field.check;
  switch (c.kind) {
    case "string":
      return null;
    case "url":
      return isHttpUrl(value) ? null : "must be an absolute http(s) URL";
    case "enum":
      return c.values.includes(value) ? null : `must be one of ${c.values.join(", ")}`;
    case "pattern":
      return c.pattern.test(value) ? null : `must be ${c.description}`;
  }
}

/**
 * Validates a config object against its type's registry entry and returns the normalised config:
 * - required fields must be present non-blank strings (`config.apiKey: is required`);
 * - an optional field that is absent, null or "" is unset, and takes its default when it has one;
 * - no value contains a control character;
 * - secrets are at least 4 characters; URLs are absolute http(s) URLs; enums and patterns apply;
 * - `headers` is an optional record of HTTP header names to string values;
 * - keys the type does not define are dropped (unknown fields are ignored, as everywhere).
 * Throws invalid("config.<field>: ...") on the first problem.
 */
export function validateConfig(type: DestinationType, input: Record<string, unknown>): DestinationConfig {
  const out: DestinationConfig = {};
  for (const field of configFields(type)) {
    const path = `config.${field.name}`;
    const raw = input[field.name];
    if (raw !== undefined && raw !== null && typeof raw !== "string") {
      throw invalid(`${path}: must be string`);
    }
    const value = raw ?? "";
    if (value === "") {
      if (field.required) throw invalid(`${path}: is required`);
      if (field.default !== undefined) out[field.name] = field.default;
      continue;
    }
    if (field.required && value.trim() === "") throw invalid(`${path}: must not be blank`);
    const problem = checkValue(field, value);
    if (problem) throw invalid(`${path}: ${problem}`);
    out[field.name] = value;
  }
  const headers = input.headers;
  if (headers !== undefined && headers !== null) out.headers = validateHeaders(headers);
  return out;
}

/**
 * Refuses a config whose URL fields name a literal address the policy refuses
 * (BROADCAST_REFUSE_PRIVATE_ADDRESSES, BROADCAST_ALLOWED_PRIVATE_HOSTS), as WHATWG URL reads it:
 * `http://2130706433/` is 127.0.0.1. Host names are checked when a delivery or test connects
 * (what they resolve to may change): `config.url: refused: 127.0.0.1 is a private address (…)`.
 */
export function refusePrivateUrls(
  type: DestinationType,
  config: DestinationConfig,
  policy: OutboundPolicy,
): void {
  for (const field of configFields(type)) {
    const value = config[field.name];
    if (field.check.kind !== "url" || typeof value !== "string") continue;
    const host = new URL(value).hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) !== 0 && !policy.allowsHost(host))
      throw invalid(`config.${field.name}: ${refusedText(host)}`);
  }
}
