/** A JSON object as parsed (a client's body, an upstream's answer). */
export type Json = Record<string, unknown>;

/** Whether a parsed JSON value is an object (not null, not an array). */
export function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
