/**
 * OTLP encoding cost (docs/performance.md "Broadcast"): 3,000 fully populated generations in
 * batches of 100, the body as the serializer's bytes (what the encoder sends) against the former
 * path (decode to a string, then the HTTP client encodes it again), alternating rounds in one run.
 * Usage: npx tsx bench/otlp-encode.ts
 */
import { DEFAULT_OTLP_OPTIONS, otlpTraceJsonBytes } from "../src/broadcast/encoders/otlp-json.js";
import type { BroadcastGeneration } from "../src/broadcast/encoders/encoder.js";
import { fullGeneration } from "./lib/full-generation.js";

const gens = Array.from({ length: 3_000 }, (_, i) => fullGeneration(i));
type Render = (b: readonly BroadcastGeneration[]) => Uint8Array | string;
const run = (render: Render): number => {
  const t0 = performance.now();
  for (let i = 0; i < gens.length; i += 100) {
    const body = render(gens.slice(i, i + 100));
    if (typeof body === "string") Buffer.from(body, "utf8");
  }
  return performance.now() - t0;
};
const bytes: Render = (b) => otlpTraceJsonBytes(b, DEFAULT_OTLP_OPTIONS);
const decoded: Render = (b) => new TextDecoder().decode(otlpTraceJsonBytes(b, DEFAULT_OTLP_OPTIONS));
let tOld = 0;
let tNew = 0;
for (let r = 0; r < 6; r++) {
  tOld += run(decoded);
  tNew += run(bytes);
}
const rate = (ms: number) => Math.round((6 * gens.length) / (ms / 1000)).toLocaleString("en-US");
console.log(`decode + re-encode (baseline): ${rate(tOld)} generations/s`);
console.log(`bytes as sent:                 ${rate(tNew)} generations/s`);
console.log(`ratio (bytes / baseline):      ${(tOld / tNew).toFixed(2)}`);
