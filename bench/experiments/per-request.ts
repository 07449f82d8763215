/**
 * What every model request makes before any work of its own, each against what it replaced (the
 * baseline), in the same run, alternating (A B B A …), after a warm-up of both:
 *
 *   logger        request.log for a request that logs nothing through it (nearly all: the
 *                 request line is the app's onResponse hook): a pino child bound to the request
 *                 id, made for every request (Fastify's default), against
 *                 src/http/request-logger.ts (made on first use). The production logger:
 *                 loggerOptions(), redaction paths included, writing to /dev/null. Then the same
 *                 for a request that does log one line (where the deferred logger adds a call).
 *   cancellation  the request's cancellation as the data plane uses it (made, listened on by
 *                 the upstream call, the listener removed, checked; never aborted): an
 *                 AbortController and its AbortSignal (an EventTarget) against
 *                 src/gateway/cancellation.ts.
 *   key hash      the SHA-256 of the presented key (hashKey): a Hash object (createHash) against
 *                 the one-shot crypto.hash.
 *   NUL scan      the body's search for U+0000 (src/http/validation.ts findNul), on the bench's
 *                 chat body and on a 20-message chat: the walk that builds every position as it
 *                 goes (the baseline, as it was up to this bench's commit) against the scan that
 *                 keeps none unless it finds one.
 *   SSE decoding  a streamed answer's bytes to text (src/gateway/providers/sse-events.ts): the
 *                 bench upstream's answer (bench/lib/gateway-load.ts) in two reads, through a
 *                 TextDecoder (the baseline) against a StringDecoder.
 *   attempt plan  a request naming one model without provider preferences (src/gateway/chat/
 *                 attempts.ts planAttempts), on a catalog of two models with two endpoints
 *                 each: the general plan (filters, ranks, sorts; the baseline, reached here
 *                 with an empty preferences object) against the plan made once per model and
 *                 copied.
 *   metrics       what a model request counts with GATEHOUSE_METRICS_TOKEN set (its HTTP answer,
 *                 one upstream attempt, the generation: src/metrics/gatehouse-metrics.ts): every
 *                 count through prom-client's labelled inc() (the baseline) against the running
 *                 totals handed to prom-client only when scraped (src/metrics/tallies.ts); the
 *                 three histogram observations are in both.
 *
 * Printed: µs per request of each (median of the rounds), and the ratio.
 *
 *   npx tsx bench/experiments/per-request.ts [--requests 200000] [--rounds 4]
 */
import { createHash } from "node:crypto";
import { StringDecoder } from "node:string_decoder";
import { openSync } from "node:fs";
import pino from "pino";
import type { FastifyBaseLogger } from "fastify";
import { numberOption } from "../lib/args.js";
import { median } from "../lib/stats.js";
import { Cancellation, type CancelSignal } from "../../src/gateway/cancellation.js";
import { LogDestination, loggerOptions } from "../../src/http/logger.js";
import { deferredChildLogger } from "../../src/http/request-logger.js";
import { hashKey, newKeyString } from "../../src/lib/ids.js";
import { findNul } from "../../src/http/validation.js";
import { Counter, Histogram, Registry } from "prom-client";
import { GatehouseMetrics } from "../../src/metrics/gatehouse-metrics.js";
import { servedGeneration } from "../../test/helpers/recording.js";
import { chatBody } from "../lib/gateway-load.js";
import { planAttempts } from "../../src/gateway/chat/attempts.js";
import type { Catalog, ModelEntry, ProviderEntry } from "../../src/gateway/catalog/catalog.js";

const opt = numberOption(process.argv.slice(2));
const REQUESTS = opt("requests", 200_000);
const ROUNDS = opt("rounds", 4);

let sink = 0;

/** µs per call of `once`, over n calls. */
function time(once: (i: number) => void, n: number): number {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) once(i);
  return ((performance.now() - t0) * 1000) / n;
}

/** Baseline and candidate alternating; prints both medians and the ratio. */
function compare(
  what: string,
  names: [string, string],
  base: (i: number) => void,
  next: (i: number) => void,
) {
  time(base, REQUESTS / 4);
  time(next, REQUESTS / 4);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      a.push(time(base, REQUESTS));
      b.push(time(next, REQUESTS));
    } else {
      b.push(time(next, REQUESTS));
      a.push(time(base, REQUESTS));
    }
  }
  const [ma, mb] = [median(a), median(b)];
  console.log(
    `${what}: ${names[0]} ${ma.toFixed(2)} µs, ${names[1]} ${mb.toFixed(2)} µs (${((100 * mb) / ma).toFixed(1)} %)`,
  );
}

// --- the request's logger
const out = new LogDestination(openSync("/dev/null", "w"));
const options = loggerOptions({ logLevel: "info" }, out) as pino.LoggerOptions & {
  stream: pino.DestinationStream;
};
const root = pino(options, options.stream) as unknown as FastifyBaseLogger;
const eager = (logger: FastifyBaseLogger, bindings: { reqId: string }, o: object) =>
  logger.child(bindings, o);
for (const logs of [false, true]) {
  const request = (factory: typeof eager) => (i: number) => {
    const log = factory(root, { reqId: `req-${i}` }, {});
    if (logs) log.warn({ store: "sqlite" }, "readiness check failed");
    sink += log.level.length;
  };
  compare(
    logs ? "logger, a request that logs one line" : "logger, a request that logs nothing",
    ["pino child per request", "made on first use"],
    request(eager),
    request(deferredChildLogger),
  );
}
out.flush();

// --- the request's cancellation
const onAbort = (): void => {
  sink++;
};
const useSignal = (signal: CancelSignal): void => {
  if (signal.aborted) return;
  signal.addEventListener("abort", onAbort, { once: true });
  if (!signal.aborted) sink++;
  signal.removeEventListener("abort", onAbort);
  if (!signal.aborted) sink++;
};
compare(
  "cancellation",
  ["AbortController + signal", "Cancellation"],
  () => useSignal(new AbortController().signal),
  () => useSignal(new Cancellation()),
);

// --- the key's hash
const keys = Array.from({ length: 1024 }, () => newKeyString());
compare(
  "key hash",
  ["createHash", "crypto.hash"],
  (i) => {
    sink += createHash("sha256")
      .update(keys[i & 1023]!, "utf8")
      .digest("hex").length;
  },
  (i) => {
    sink += hashKey(keys[i & 1023]!).length;
  },
);

// --- the body's NUL scan
interface At {
  key: string;
  parent: At | null;
}
/** The baseline: findNul as it was, every position built while walking (found: its depth). */
function walkWithPositions(root: unknown): number | null {
  const stack: [unknown, At | null][] = [[root, null]];
  const depth = (at: At | null) => {
    let n = 0;
    for (let a = at; a; a = a.parent) n++;
    return n;
  };
  while (stack.length > 0) {
    const [value, at] = stack.pop()!;
    if (typeof value === "string") {
      if (value.includes("\u0000")) return depth(at);
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push([v, { key: String(i), parent: at }]));
    } else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        if (k.includes("\u0000")) return depth({ key: k, parent: at });
        stack.push([v, { key: k, parent: at }]);
      }
    }
  }
  return null;
}
const benchBody = JSON.parse(chatBody("bench/tiny", false)) as unknown;
const longChat = {
  model: "bench/tiny",
  messages: Array.from({ length: 20 }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: `turn ${i}: ${"some words of a conversation ".repeat(8)}`,
  })),
  temperature: 0.2,
  max_tokens: 256,
};
for (const [name, body] of [
  ["bench chat body", benchBody],
  ["20-message chat", longChat],
] as const) {
  if (findNul(body) !== null || walkWithPositions(body) !== null) throw new Error("the bodies hold no NUL");
  compare(
    `NUL scan, ${name}`,
    ["positions built", "positions only when found"],
    () => {
      sink += walkWithPositions(body) ?? 1;
    },
    () => {
      sink += findNul(body) === null ? 1 : 0;
    },
  );
}

// --- a stream's bytes to text
const streamed = Buffer.from(
  [
    { role: "assistant", content: "" },
    { content: "Hello there," },
    { content: " bench" },
    { content: " friend." },
  ]
    .map((delta) =>
      JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        created: 1795773012,
        model: "tiny",
        choices: [{ index: 0, delta, finish_reason: null }],
      }),
    )
    .map((json) => `data: ${json}\n\n`)
    .join("") + "data: [DONE]\n\n",
);
const reads = [streamed.subarray(0, streamed.length >> 1), streamed.subarray(streamed.length >> 1)];
compare(
  "SSE decoding, one streamed answer",
  ["TextDecoder", "StringDecoder"],
  () => {
    const d = new TextDecoder();
    for (const r of reads) sink += d.decode(r, { stream: true }).length;
    sink += d.decode().length;
  },
  () => {
    const d = new StringDecoder("utf8");
    for (const r of reads) sink += d.write(r).length;
    sink += d.end().length;
  },
);

// --- a model request's metrics
const served = servedGeneration(
  { id: 1, hash: "h", organizationId: "o", workspaceId: "w", creatorUserId: null },
  { model: "bench/tiny", provider: "local", promptTokens: 12, latencyMs: 3 },
);
const tallied = new GatehouseMetrics();
const reg = new Registry();
const counter = (name: string, labelNames: string[]) =>
  new Counter({ name, help: name, labelNames, registers: [reg] });
const histogram = (name: string, labelNames: string[]) =>
  new Histogram({ name, help: name, labelNames, registers: [reg] });
const httpCount = counter("http", ["method", "route", "status_code"]);
const httpSeconds = histogram("http_s", ["method", "route"]);
const attempts = counter("attempts", ["provider", "model", "status"]);
const generations = counter("generations", ["provider", "model", "outcome"]);
const tokens = counter("tokens", ["provider", "model", "type"]);
const cost = counter("cost", ["provider", "model", "billed_to"]);
const firstToken = histogram("ttft", ["provider", "streamed"]);
const overhead = histogram("overhead", []);
const ROUTE = "/api/v1/chat/completions";
compare(
  "metrics, one model request",
  ["prom-client inc() per count", "running totals"],
  () => {
    const g = served;
    const pm = { provider: g.provider, model: g.model };
    attempts.inc({ ...pm, status: "200" });
    generations.inc({ ...pm, outcome: "completed" });
    for (const [type, n] of [
      ["prompt", g.promptTokens],
      ["completion", g.completionTokens],
      ["cached", g.cachedTokens],
      ["reasoning", g.reasoningTokens],
    ] as const) {
      tokens.inc({ ...pm, type }, n);
    }
    cost.inc({ ...pm, billed_to: "credits" }, Number(g.costNano) / 1e9);
    firstToken.observe({ provider: g.provider, streamed: String(g.streamed) }, g.latencyMs / 1000);
    overhead.observe(0.0002);
    httpCount.inc({ method: "POST", route: ROUTE, status_code: "200" });
    httpSeconds.observe({ method: "POST", route: ROUTE }, 0.003);
  },
  () => {
    tallied.attempt(served.provider, served.model, 200);
    tallied.generation(served, 0.2);
    tallied.request("POST", ROUTE, 200, 0.003);
  },
);

// --- the attempt plan
const provider = (slug: string) =>
  ({ slug, name: slug, kind: "openai-compatible" }) as unknown as ProviderEntry;
const endpoint = (p: string) => ({
  provider: p,
  upstreamModel: "tiny",
  promptPricePerMTokNano: 1_000_000n,
  completionPricePerMTokNano: 2_000_000n,
  supportedParameters: [],
});
const modelEntry = (id: string): ModelEntry =>
  ({
    id,
    name: id,
    kind: "chat",
    isMock: false,
    endpoints: [endpoint("a"), endpoint("b")],
  }) as unknown as ModelEntry;
const catalog: Catalog = {
  providers: new Map([
    ["a", provider("a")],
    ["b", provider("b")],
  ]),
  models: new Map([
    ["bench/tiny", modelEntry("bench/tiny")],
    ["bench/other", modelEntry("bench/other")],
  ]),
};
compare(
  "attempt plan, one model, no preferences",
  ["general plan", "made once per model"],
  () => (sink += planAttempts(catalog, "bench/tiny", undefined, {}).length),
  () => (sink += planAttempts(catalog, "bench/tiny", undefined, null).length),
);

if (sink < 0) console.log(sink);
