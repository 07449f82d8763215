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
 *
 * Printed: µs per request of each (median of the rounds), and the ratio.
 *
 *   npx tsx bench/per-request.ts [--requests 200000] [--rounds 4]
 */
import { createHash } from "node:crypto";
import { openSync } from "node:fs";
import pino from "pino";
import type { FastifyBaseLogger } from "fastify";
import { numberOption } from "./lib/args.js";
import { median } from "./lib/stats.js";
import { Cancellation, type CancelSignal } from "../src/gateway/cancellation.js";
import { LogDestination, loggerOptions } from "../src/http/logger.js";
import { deferredChildLogger } from "../src/http/request-logger.js";
import { hashKey, newKeyString } from "../src/lib/ids.js";

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

if (sink < 0) console.log(sink);
