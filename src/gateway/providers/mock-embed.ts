import { createHash } from "node:crypto";

/**
 * The built-in mock's vectors (`mock/embed`): deterministic, so that tests and demos can compare
 * them. An input's vector depends on its text (or token ids) and the dimensions only: SHA-256 of
 * the input, extended block by block, read as uniform values in [-1, 1) and scaled to length 1
 * (as real embedding models give them: a dot product is the cosine). Different inputs give
 * unrelated vectors; nothing semantic is modelled.
 */
export const MOCK_EMBED_DIMENSIONS = 8;
/** The most `dimensions` the mock computes (each costs a slice of a hash). */
export const MOCK_EMBED_MAX_DIMENSIONS = 4096;

export function mockVector(
  input: string | readonly number[],
  dimensions = MOCK_EMBED_DIMENSIONS,
): Float32Array {
  // Texts and token lists are kept apart: "1,2" the text is not [1, 2] the tokens.
  const key = typeof input === "string" ? `text:${input}` : `tokens:${input.join(",")}`;
  const seed = createHash("sha256").update(key).digest();
  const out = new Float32Array(dimensions);
  let block = seed;
  for (let i = 0; i < dimensions; i++) {
    const at = (i % 8) * 4;
    if (i > 0 && at === 0) block = createHash("sha256").update(seed).update(String(i)).digest();
    out[i] = (block.readUInt32LE(at) / 2 ** 32) * 2 - 1;
  }
  let norm = 0;
  for (const x of out) norm += x * x;
  norm = Math.sqrt(norm);
  // A zero vector cannot come out of a hash in practice; it would stay as it is.
  if (norm > 0) for (let i = 0; i < dimensions; i++) out[i] = (out[i] as number) / norm;
  return out;
}
