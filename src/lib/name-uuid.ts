import { createHash } from "node:crypto";

/**
 * A name-based (RFC 4122 version 5, SHA-1) UUID of `name` under `namespace` (a UUID): the same
 * inputs give the same id on every instance and after every restart, so an id can be derived
 * instead of stored.
 */
export function nameUuid(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  const b = createHash("sha1").update(ns).update(name, "utf8").digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
