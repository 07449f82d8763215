/**
 * Writes that every model request's answer causes, against what they were, in the same run,
 * alternating (A B B A …), after a warm-up of both:
 *
 *   request log  request lines at a few per event-loop turn, as under load, to a file:
 *                src/http/logger.ts's LogDestination as it is (lines gathered in an array, joined
 *                into one chunk per LOG_BUFFER_BYTES) against sonic-boom gathering them itself
 *                (minLength LOG_BUFFER_BYTES, as up to 2026-11-30), which appends each line to
 *                the string it holds and measures that string's whole length on every write.
 *   journal      the recording journal's appends (src/gateway/recording/journal.ts) at 3.4 a turn, the
 *                average number of answers that finish in one turn at saturation
 *                (docs/performance.md): a SegmentLog gathering a turn's appends into one write
 *                (gatherTurn) against one write per append.
 *
 * Printed: the process's CPU time (all threads: the log's writes run on libuv's pool) per line or
 * append, writes per 1,000, medians of the rounds, and the ratios.
 *
 *   npx tsx bench/experiments/write-batching.ts [--lines 40000] [--appends 20000] [--rounds 4]
 */
import { mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { numberOption } from "../lib/args.js";
import { alternate } from "../lib/alternate.js";
import { median } from "../lib/stats.js";
import { LOG_BUFFER_BYTES, LogDestination, loggerOptions } from "../../src/http/logger.js";
import { SegmentLog } from "../../src/stores/segment-log.js";

const opt = numberOption(process.argv.slice(2));
const LINES = opt("lines", 40_000);
const APPENDS = opt("appends", 20_000);
const ROUNDS = opt("rounds", 4);
const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-writes-"));

const nextTurn = () => new Promise<void>((done) => setImmediate(done));
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

interface Run {
  /** CPU µs per line or append. */
  cpu: number;
  /** Writes per 1,000 lines or appends. */
  writes: number;
}

/** Request lines, four a turn: through LogDestination, or straight to sonic-boom gathering them. */
async function logLines(inSonicBoom: boolean): Promise<Run> {
  const fd = openSync(join(dir, "log"), "w");
  const out = new LogDestination(inSonicBoom ? openSync("/dev/null", "w") : fd, 3_600_000);
  const sonic = inSonicBoom
    ? pino.destination({ dest: fd, sync: false, minLength: LOG_BUFFER_BYTES, maxWrite: 256 * 1024 })
    : out.file;
  let writes = 0;
  sonic.on("write", () => writes++);
  const log = pino(
    loggerOptions({ logLevel: "info" }, out) as pino.LoggerOptions,
    inSonicBoom ? sonic : out.stream,
  );
  const req = { id: "req-1a2b", method: "POST", url: "/api/v1/chat/completions" };
  const c0 = cpuUs();
  for (let i = 0; i < LINES; i++) {
    log.info({ reqId: `req-${i}`, req, res: { statusCode: 200 }, responseTime: 1.2345 }, "request completed");
    if (i % 4 === 3) await nextTurn();
  }
  const cpu = (cpuUs() - c0) / LINES;
  const w = writes;
  out.close();
  if (inSonicBoom) {
    sonic.flushSync();
    sonic.destroy();
  }
  return { cpu, writes: (1000 * w) / LINES };
}

/** Journal-sized payloads (~700 bytes), 3.4 appends a turn on average (3 and 4 alternating, 2:3). */
async function journalAppends(gatherTurn: boolean, round: number): Promise<Run> {
  const log = SegmentLog.open(join(dir, `journal-${gatherTurn}-${round}`), {
    suffix: ".journal",
    keepAppended: false,
    segmentBytes: 1024 * 1024,
    gatherTurn,
  });
  const payload = JSON.stringify({ id: "gen-x", model: "bench/tiny", usage: "u".repeat(600) });
  const c0 = cpuUs();
  let made = 0;
  for (let turn = 0; made < APPENDS; turn++) {
    const n = turn % 5 < 2 ? 3 : 4;
    const appends: Promise<void>[] = [];
    for (let i = 0; i < n; i++) appends.push(log.append(`gen-${made++}`, payload, false));
    await Promise.all(appends);
    log.release(Array.from({ length: n }, (_, i) => `gen-${made - n + i}`));
  }
  const cpu = (cpuUs() - c0) / made;
  const writes = (1000 * log.writes) / made;
  await log.close();
  return { cpu, writes };
}

async function compare(
  what: string,
  names: [string, string],
  base: (r: number) => Promise<Run>,
  next: (r: number) => Promise<Run>,
): Promise<void> {
  const [a, b] = await alternate(ROUNDS, base, next);
  const [ca, cb] = [median(a.map((x) => x.cpu)), median(b.map((x) => x.cpu))];
  const [wa, wb] = [median(a.map((x) => x.writes)), median(b.map((x) => x.writes))];
  console.log(
    `${what}: ${names[0]} ${ca.toFixed(2)} µs CPU, ${wa.toFixed(0)} writes per 1,000; ` +
      `${names[1]} ${cb.toFixed(2)} µs CPU, ${wb.toFixed(0)} writes per 1,000 ` +
      `(CPU ${((100 * cb) / ca).toFixed(1)} %, writes ${((100 * wb) / wa).toFixed(1)} %)`,
  );
}

try {
  await compare(
    "request log, per line",
    ["gathered by sonic-boom", "gathered in an array"],
    () => logLines(true),
    () => logLines(false),
  );
  await compare(
    "journal, per append",
    ["one write per append", "one write per turn"],
    (r) => journalAppends(false, r),
    (r) => journalAppends(true, r),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
