/**
 * A streamed answer's chunk events: the gateway's ChunkEncoder (the head serialized once per
 * stream) against serializing each whole chunk object (the baseline: what the encoder replaced),
 * in the same run, alternating. Both produce the same bytes (checked first). Printed: µs per
 * chunk of each, and the ratio.
 *
 *   npx tsx bench/experiments/stream-chunks.ts [--chunks 300000] [--rounds 4]
 */
import { numberOption } from "../lib/args.js";
import { median } from "../lib/stats.js";
import { ChunkEncoder, sse, type ChunkHead } from "../../src/gateway/chat/wire.js";
import type { ProviderChunk } from "../../src/gateway/providers/provider.js";

const opt = numberOption(process.argv.slice(2));
const CHUNKS = opt("chunks", 300_000);
const ROUNDS = opt("rounds", 4);

const h: ChunkHead = {
  id: "gen-1795773012453-EI7-2UtZb4uaH_fJTwU6wUIa",
  created: 1795773012,
  model: "bench/tiny",
  provider: "Bench",
};
/** The content chunks of bench/lib/gateway-load.ts's upstream answer: role, three texts, finish. */
const chunks: ProviderChunk[] = [
  ...["", "Hello there,", " bench", " friend."].map((content, i) => ({
    upstreamId: "chatcmpl-1",
    usage: null,
    choices: [
      { index: 0, delta: i === 0 ? { role: "assistant", content } : { content }, finish_reason: null },
    ],
  })),
  { upstreamId: "chatcmpl-1", usage: null, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
];

/** The baseline, as the gateway encoded chunks up to 12dbcb1 (chat/wire.ts): the whole object per chunk. */
const head = (x: ChunkHead) => ({
  id: x.id,
  provider: x.provider,
  model: x.model,
  object: "chat.completion.chunk",
  created: x.created,
});
function cleanDelta(delta: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(delta)) {
    if (v === null || v === undefined) continue;
    if (k === "role" && v !== "assistant") continue;
    out[k] = v;
  }
  return out;
}
function wholeObject(c: ProviderChunk): string {
  return sse({
    ...head(h),
    choices: c.choices.map((ch) => ({
      index: ch.index,
      delta: cleanDelta(ch.delta),
      finish_reason: ch.finish_reason,
    })),
  });
}

const encoder = (): ((c: ProviderChunk) => string) => {
  const e = new ChunkEncoder(h);
  return (c) => e.content(c);
};

for (const c of chunks) {
  if (encoder()(c) !== wholeObject(c)) throw new Error("the encoder's bytes differ from the whole object's");
}

/** µs per chunk: one encoder per stream of chunks.length chunks, as the gateway does. */
function time(perStream: () => (c: ProviderChunk) => string): number {
  let bytes = 0;
  const t0 = performance.now();
  for (let i = 0; i < CHUNKS; i += chunks.length) {
    const encode = perStream();
    for (const c of chunks) bytes += encode(c).length;
  }
  const ms = performance.now() - t0;
  if (bytes === 0) throw new Error("nothing encoded");
  return (ms * 1000) / CHUNKS;
}

const base: number[] = [];
const mine: number[] = [];
time(() => wholeObject);
time(encoder); // warm both
for (let r = 0; r < ROUNDS; r++) {
  base.push(time(() => wholeObject));
  mine.push(time(encoder));
}
const b = median(base);
const m = median(mine);
console.log(`${ROUNDS} rounds of ${CHUNKS} chunks, medians`);
console.log("");
console.log("| encoding | µs per chunk |");
console.log("| --- | --- |");
console.log(`| whole object per chunk (baseline) | ${b.toFixed(3)} |`);
console.log(`| ChunkEncoder | ${m.toFixed(3)} |`);
console.log("");
console.log(`ChunkEncoder / baseline: ${((100 * m) / b).toFixed(1)} %`);
