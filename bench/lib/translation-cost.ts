/**
 * What a translated surface's own functions cost per request, measured in process (no server, no
 * network): the request's translation to chat completions plus the answer's translation back
 * (the whole answer serialised, or every event of the stream), for the same request and answer
 * the surfaces bench sends and its upstream gives. The native path on the same provider does its
 * own parsing and encoding besides, so this is an upper bound of the translation's extra CPU,
 * without the noise of a saturation run (bench/surfaces.ts's table differs run to run by more than
 * the bound it checks).
 */
import type { Answer } from "../../src/gateway/chat/complete.js";
import { chatStream, type StreamEncoderFor } from "../../src/gateway/chat/stream-encoder.js";
import type { ProviderChunk } from "../../src/gateway/providers/provider.js";
import { messagesRequest } from "../../src/gateway/surfaces/messages/messages-surface.js";
import { responsesRequest } from "../../src/gateway/surfaces/responses/responses-surface.js";
import { median } from "./stats.js";

const SAY = "Say hello to the benchmark.";
const WORDS = ["Hello there,", " bench", " friend."];
const USAGE = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18, cost: 0.000018 };
const HEAD = { id: "gen-bench-1", created: 1_764_000_000, model: "bench/tiny", provider: "bench" };

/** The chat answer the gateway builds from the bench upstream's JSON answer. */
const chatAnswer = (): Answer => ({
  headers: {},
  body: {
    id: HEAD.id,
    provider: HEAD.provider,
    model: HEAD.model,
    object: "chat.completion",
    created: HEAD.created,
    system_fingerprint: null,
    choices: [{ index: 0, message: { role: "assistant", content: WORDS.join("") }, finish_reason: "stop" }],
    usage: { ...USAGE },
  },
});

/** The chunks the gateway's OpenAI-compatible adapter reads from the bench upstream's stream. */
const CHUNKS: ProviderChunk[] = [
  {
    upstreamId: "chatcmpl-1",
    choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
    usage: null,
  },
  ...WORDS.map((w) => ({
    upstreamId: "chatcmpl-1",
    choices: [{ index: 0, delta: { content: w }, finish_reason: null }],
    usage: null,
  })),
  { upstreamId: "chatcmpl-1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null },
];

function streamBytes(encoderFor: StreamEncoderFor): number {
  const enc = encoderFor(HEAD);
  let out = enc.open();
  for (const c of CHUNKS) out += enc.chunk(c);
  out += enc.finish({ ...USAGE }, "stop") + enc.done;
  return out.length;
}

interface Case {
  name: string;
  /** One request's translation work; returns something so that nothing is optimised away. */
  run: (stream: boolean) => number;
}

const CASES: Case[] = [
  {
    name: "responses → chat completions",
    run: (stream) => {
      const raw = JSON.parse(
        JSON.stringify({ model: "bench/tiny", input: SAY, max_output_tokens: 16, stream, store: false }),
      );
      const r = responsesRequest(raw);
      const chatBody = JSON.stringify(r.body);
      if (stream) return chatBody.length + streamBytes(r.encoderFor);
      return chatBody.length + JSON.stringify(r.answer(chatAnswer()).body).length;
    },
  },
  {
    name: "messages → chat completions",
    run: (stream) => {
      const raw = JSON.parse(
        JSON.stringify({
          model: "bench/tiny",
          messages: [{ role: "user", content: SAY }],
          max_tokens: 16,
          stream,
        }),
      );
      const r = messagesRequest(raw);
      const chatBody = JSON.stringify(r.body);
      if (stream) return chatBody.length + streamBytes(r.encoderFor);
      return chatBody.length + JSON.stringify(r.answer(chatAnswer()).body).length;
    },
  },
  {
    // For scale: what the chat surface itself spends on the same answer (its own encoding).
    name: "chat completions (its own encoding, for scale)",
    run: (stream) => (stream ? streamBytes(chatStream) : JSON.stringify(chatAnswer().body).length),
  },
];

/** Microseconds per request of each case, JSON and streamed: the median of `samples` timed runs. */
export function translationCost(
  iterations = 20_000,
  samples = 7,
): { name: string; json: number; stream: number }[] {
  let sink = 0;
  const time = (c: Case, stream: boolean): number => {
    const runs: number[] = [];
    for (let s = 0; s < samples; s++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < iterations; i++) sink += c.run(stream);
      runs.push(Number(process.hrtime.bigint() - t0) / 1000 / iterations);
    }
    return median(runs);
  };
  // Warm-up: every path compiled before anything is timed.
  for (const c of CASES) for (let i = 0; i < 5_000; i++) sink += c.run(false) + c.run(true);
  const out = CASES.map((c) => ({ name: c.name, json: time(c, false), stream: time(c, true) }));
  if (sink === 0) throw new Error("nothing was translated");
  return out;
}
