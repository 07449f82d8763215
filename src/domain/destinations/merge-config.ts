import { maskField, maskSecret } from "./mask.js";
import type { DestinationType } from "./destination-types.js";
import { validateConfig, type DestinationConfig } from "./validate-config.js";

/**
 * PATCH semantics of `config`: only the fields sent change, the others keep their stored value.
 * - A value equal to the masked form of the stored value is ignored (a client echoing what it read
 *   leaves the secret unchanged).
 * - null (or "") unsets an optional field, which then takes its default; on a required field it is
 *   400 `is required`.
 * - `headers` is replaced as a whole when sent (null or {} removes all headers); a header value
 *   equal to the masked form of the stored value of the same header keeps the stored value.
 * The merged config is validated again as a whole.
 */
export function mergeConfig(
  type: DestinationType,
  stored: DestinationConfig,
  patch: Record<string, unknown>,
): DestinationConfig {
  const merged: Record<string, unknown> = { ...stored };
  for (const [name, value] of Object.entries(patch)) {
    if (name === "headers") {
      merged.headers = mergeHeaders(stored.headers, value);
      continue;
    }
    const current = stored[name];
    if (
      typeof value === "string" &&
      typeof current === "string" &&
      value === maskField(type, name, current)
    ) {
      continue;
    }
    merged[name] = value;
  }
  return validateConfig(type, merged);
}

function mergeHeaders(stored: Record<string, string> | undefined, sent: unknown): unknown {
  if (typeof sent !== "object" || sent === null || Array.isArray(sent)) return sent;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(sent as Record<string, unknown>)) {
    const current = stored?.[name];
    out[name] = current !== undefined && value === maskSecret(current) ? current : value;
  }
  return out;
}
