import { endianness } from "node:os";

/**
 * Vectors as OpenAI's embeddings API carries them when asked for `encoding_format: "base64"`: the
 * float32 values' little-endian bytes, base64-encoded. Clients decode them with a Float32Array
 * over the bytes (the `openai` package does so, and asks for base64 by default).
 */
const LITTLE_ENDIAN = endianness() === "LE";
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The vector's little-endian float32 bytes in base64. */
export function float32ToBase64(v: Float32Array): string {
  if (LITTLE_ENDIAN) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64");
  const bytes = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) bytes.writeFloatLE(v[i] as number, i * 4);
  return bytes.toString("base64");
}

/**
 * Base64 of little-endian float32 bytes as a vector; null when the text is not base64 or its
 * bytes are not whole float32 values (a length not a multiple of 4).
 */
export function base64ToFloat32(text: string): Float32Array | null {
  if (!BASE64.test(text)) return null;
  const bytes = Buffer.from(text, "base64");
  if (bytes.length % 4 !== 0) return null;
  const out = new Float32Array(bytes.length / 4);
  // A copy: the decoded Buffer may sit at an offset of a pooled buffer that is not 4-aligned.
  if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(bytes);
  else for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}
