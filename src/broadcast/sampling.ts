import { createHash } from "node:crypto";

/**
 * The sampling point of a generation for a destination: a hash of (destination id, session id, or
 * the generation id when there is none) mapped into [0, 1). Deterministic, so every instance, every
 * retry and every replay decides the same, and a whole session is in or out (docs/broadcast.md
 * "Selection"). 48 bits of SHA-256: exact in a double, and uniform.
 */
export function samplingPoint(destinationId: string, sessionId: string | null, generationId: string): number {
  const key = sessionId ?? generationId;
  const digest = createHash("sha256").update(`${destinationId}\u0000${key}`, "utf8").digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** Whether a destination with this sampling rate takes the generation (rate >= 1 takes all). */
export function sampledIn(
  destinationId: string,
  rate: number,
  sessionId: string | null,
  generationId: string,
): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  return samplingPoint(destinationId, sessionId, generationId) < rate;
}
