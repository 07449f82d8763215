/**
 * OTLP encoding cost (docs/performance.md "Broadcast"): 3,000 fully populated generations in
 * batches of 100, rendered as the bytes that are sent by the direct JSON writer (production,
 * src/broadcast/encoders/otlp-json.ts) and by the OpenTelemetry JS serializer it replaced
 * (otlp-transformer's JsonTraceSerializer, the test reference), alternating rounds in one run.
 * The two outputs are checked to be the same JSON first.
 * Usage: npx tsx bench/experiments/otlp-encode.ts [--gens 3000 --rounds 6]
 */
import { deepStrictEqual } from "node:assert";
import { DEFAULT_OTLP_OPTIONS, otlpTraceJsonBytes } from "../../src/broadcast/encoders/otlp-json.js";
import type { BroadcastGeneration } from "../../src/broadcast/encoders/encoder.js";
import { referenceOtlpJsonBytes } from "../../test/helpers/otlp-reference.js";
import { fullGeneration } from "../lib/full-generation.js";

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const GENS = arg("gens", 3_000);
const ROUNDS = arg("rounds", 6);
const BATCH = 100;

const gens = Array.from({ length: GENS }, (_, i) => fullGeneration(i));
type Render = (b: readonly BroadcastGeneration[]) => Uint8Array;
const writer: Render = (b) => otlpTraceJsonBytes(b, DEFAULT_OTLP_OPTIONS);
const reference: Render = (b) => referenceOtlpJsonBytes(b, DEFAULT_OTLP_OPTIONS);
const parse = (u: Uint8Array): unknown => JSON.parse(Buffer.from(u).toString("utf8"));
deepStrictEqual(parse(writer(gens.slice(0, BATCH))), parse(reference(gens.slice(0, BATCH))));

let bytes = 0;
const run = (render: Render): number => {
  const t0 = performance.now();
  for (let i = 0; i < gens.length; i += BATCH) bytes = render(gens.slice(i, i + BATCH)).byteLength;
  return performance.now() - t0;
};
let tRef = 0;
let tWriter = 0;
for (let r = 0; r < ROUNDS; r++) {
  tRef += run(reference);
  tWriter += run(writer);
}
const rate = (ms: number) => Math.round((ROUNDS * gens.length) / (ms / 1000)).toLocaleString("en-US");
console.log(`body of ${BATCH} generations: ${(bytes / 1024).toFixed(0)} KiB`);
console.log(`otlp-transformer JsonTraceSerializer (baseline): ${rate(tRef)} generations/s`);
console.log(`direct JSON writer (production):                 ${rate(tWriter)} generations/s`);
console.log(`ratio (writer / baseline):                       ${(tRef / tWriter).toFixed(2)}`);
