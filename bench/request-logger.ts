/**
 * A request's logger, for a request that logs nothing through it (the request line is written by
 * the app's onResponse hook): Fastify's default (a pino child bound to the request id, made for
 * every request) against src/http/request-logger.ts (made on first use), in the same run,
 * alternating. The logger is the production one: loggerOptions() (redaction paths included)
 * writing to /dev/null. Printed: µs per request of each, and the ratio; then the same for a
 * request that does log one line (where the deferred logger adds its indirection).
 *
 *   npx tsx bench/request-logger.ts [--requests 200000] [--rounds 4]
 */
import { openSync } from "node:fs";
import pino from "pino";
import type { FastifyBaseLogger } from "fastify";
import { numberOption } from "./lib/args.js";
import { median } from "./lib/stats.js";
import { LogDestination, loggerOptions } from "../src/http/logger.js";
import { deferredChildLogger } from "../src/http/request-logger.js";

const opt = numberOption(process.argv.slice(2));
const REQUESTS = opt("requests", 200_000);
const ROUNDS = opt("rounds", 4);

const out = new LogDestination(openSync("/dev/null", "w"));
const options = loggerOptions({ logLevel: "info" }, out) as pino.LoggerOptions & {
  stream: pino.DestinationStream;
};
const root = pino(options, options.stream) as unknown as FastifyBaseLogger;

type Factory = (logger: FastifyBaseLogger, bindings: { reqId: string }, opts: object) => FastifyBaseLogger;
const eager: Factory = (logger, bindings, opts) => logger.child(bindings, opts);

let sink = 0;
/** µs per request: make the request's logger; log one line through it when `logs`. */
function run(factory: Factory, logs: boolean, n: number): number {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const log = factory(root, { reqId: `req-${i}` }, {});
    if (logs) log.warn({ store: "sqlite" }, "readiness check failed");
    sink += log.level.length;
  }
  return ((performance.now() - t0) * 1000) / n;
}

for (const logs of [false, true]) {
  // Warm both paths first (JIT), then alternate.
  run(eager, logs, REQUESTS / 4);
  run(deferredChildLogger, logs, REQUESTS / 4);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order =
      r % 2 === 0 ? ([eager, deferredChildLogger] as const) : ([deferredChildLogger, eager] as const);
    for (const f of order) (f === eager ? a : b).push(run(f, logs, REQUESTS));
  }
  const [ma, mb] = [median(a), median(b)];
  console.log(
    `${logs ? "a request that logs one line" : "a request that logs nothing"}: ` +
      `pino child per request ${ma.toFixed(2)} µs, made on first use ${mb.toFixed(2)} µs ` +
      `(${((100 * mb) / ma).toFixed(1)} %)`,
  );
}
if (sink < 0) console.log(sink);
out.flush();
