import { hash } from "node:crypto";

/**
 * Deterministic identifiers. Every id a payload carries derives from the generation (its id, or
 * the client's trace id), so re-encoding a batch yields the same ids and the destination's own
 * deduplication (event ids, object keys, insert tokens) recognises a retry.
 */

export const sha256Hex = (text: string): string => hash("sha256", text, "hex");

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

/**
 * The 16-byte trace id (32 hex digits): the client's `trace.trace_id` when it already is one,
 * else sha256 of it (the hosted original's mapping), else sha256 of the generation id.
 */
export function traceIdHex(generationId: string, clientTraceId: string | undefined): string {
  if (clientTraceId !== undefined && clientTraceId !== "") {
    const lower = clientTraceId.toLowerCase();
    return HEX32.test(lower) && lower !== "0".repeat(32) ? lower : sha256Hex(clientTraceId).slice(0, 32);
  }
  return sha256Hex(generationId).slice(0, 32);
}

/** An 8-byte span id (16 hex digits) for one role ("generation", "attempt-1", ...) of a generation. */
export const spanIdHex = (generationId: string, role: string): string =>
  sha256Hex(`${generationId}\u0000${role}`).slice(0, 16);

/** The caller's `trace.parent_span_id` when it is a valid 16-hex-digit span id. */
export function parentSpanIdHex(value: string | undefined): string | null {
  const lower = value?.toLowerCase();
  return lower !== undefined && HEX16.test(lower) && lower !== "0".repeat(16) ? lower : null;
}

const formatUuid = (hex: string): string =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;

/**
 * A UUIDv7 (RFC 9562) whose 48-bit timestamp is `unixMs` and whose "random" bits are a hash of
 * `seed`: time-ordered as the format requires, and the same on every encoding.
 */
export function uuidV7(unixMs: number, seed: string): string {
  const ts = Math.max(0, Math.floor(unixMs)).toString(16).padStart(12, "0").slice(-12);
  const h = sha256Hex(seed);
  const variant = ((parseInt(h[3]!, 16) & 0x3) | 0x8).toString(16);
  return formatUuid(`${ts}7${h.slice(0, 3)}${variant}${h.slice(4, 19)}`);
}

/** A name-based UUID (version 8, RFC 9562 §5.8) from a hash of `seed`. */
export function uuidFromSeed(seed: string): string {
  const h = sha256Hex(seed);
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return formatUuid(`${h.slice(0, 12)}8${h.slice(13, 16)}${variant}${h.slice(17, 32)}`);
}
