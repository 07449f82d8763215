/**
 * Two builds of Gatehouse side by side, for a change whose effect is smaller than this machine's
 * drift between runs: bench/gateway.ts measures one build per run, and on the shared 2-core VM the
 * same code measures anywhere from ~0.85 to ~2 ms of CPU per request from one run to the next.
 *
 * Both servers (this checkout, and the checkout given as the baseline: e.g. a `git worktree` of
 * main, built) run at once against one local upstream, each on its own data directory, with the
 * same key, budget and request as bench/gateway.ts. Saturation is measured in short closed-loop
 * slices, alternating between the two (A B B A A B …), so that both see the same machine; each
 * server's CPU time (all its threads, from /proc) is summed over its slices. Printed: each build's
 * requests/s and CPU per request, and the ratios this / baseline. Run it once more with both roots
 * the same build (`--baseline .`) to see the bias of the method itself (about ±6 % here).
 *
 * `--node-args "…"` starts this side's server with extra Node flags (e.g. a GC setting, measured
 * against the same build: `--baseline .`), and `--env "K=V …"` with extra environment (a setting
 * such as GATEHOUSE_RECORDING_GATHER_MS against its default, the same way).
 *
 * `--postgres URL` puts each side's records on a database of its own created beside URL's (and
 * dropped after): DATABASE_URL, so holds in PostgreSQL and durable answers after their commit,
 * as on several instances (the activity store stays embedded DuckDB). "CPU per request" is then
 * the server's alone, not PostgreSQL's.
 *
 *   npx tsx bench/gateway-ab.ts --baseline ../main [--slices 12] [--slice-ms 1000]
 *                               [--connections 8] [--stream] [--recording durable|deferred]
 *                               [--node-args "--max-semi-space-size=32"] [--env "K=V …"] [--postgres URL]
 *                               [--warm-seconds 10]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { numberOption, stringOption } from "./lib/args.js";
import { childJson, cpuMsOf } from "./lib/child-process.js";
import {
  benchServerEnv,
  closedLoop,
  createBenchKey,
  gatehouseTarget,
  openLoop,
  UPSTREAM_JS,
  type Target,
} from "./lib/gateway-load.js";
import { freshPostgresDatabase } from "./lib/fresh-postgres.js";
import { startBenchServer, type BenchServer } from "./lib/query-server.js";
import { quantile } from "./lib/stats.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const SLICES = opt("slices", 12);
const SLICE_MS = opt("slice-ms", 1000);
const CONNECTIONS = opt("connections", 8);
const STREAM = args.includes("--stream");
const text = stringOption(args);
const RECORDING = text("recording") ?? "durable";
const BASELINE = text("baseline");
const RATE = opt("rate", 0);
const REQUESTS = opt("requests", 50);
const NODE_ARGS = (text("node-args") ?? "").split(" ").filter((a) => a !== "");
const EXTRA_ENV = envPairs(text("env") ?? "");
const PG_URL = text("postgres");
/** Closed-loop warm-up of each side before the slices, in seconds. */
const WARM_SECONDS = opt("warm-seconds", 10);

interface Side {
  label: string;
  server: BenchServer;
  target: Target;
  cpuMs: number;
  requests: number;
  /** Fixed-rate latencies, ms (with --rate). */
  total: number[];
  ttfb: number[];
}

async function main(): Promise<void> {
  if (!BASELINE) throw new Error("--baseline: the checkout to compare with (built), e.g. a worktree of main");
  const roots: [string, string][] = [
    ["baseline", resolve(BASELINE)],
    ["this", resolve(import.meta.dirname, "..")],
  ];
  const upstream = childJson(UPSTREAM_JS);
  const dirs: string[] = [];
  const databases: { drop: () => Promise<void> }[] = [];
  const sides: Side[] = [];
  try {
    const { port } = (await upstream.first) as { port: number };
    for (const [label, root] of roots) {
      const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-ab-"));
      dirs.push(dir);
      const nodeArgs = label === "this" ? NODE_ARGS : [];
      const env = { ...benchServerEnv(dir, port, RECORDING), ...(label === "this" ? EXTRA_ENV : {}) };
      if (PG_URL) {
        const db = await freshPostgresDatabase(PG_URL);
        databases.push(db);
        env.DATABASE_URL = db.url;
      }
      const server = await startBenchServer(env, nodeArgs, root);
      const key = await createBenchKey(server.base);
      sides.push({
        label,
        server,
        target: gatehouseTarget(label, server.base, key, STREAM),
        cpuMs: 0,
        requests: 0,
        total: [],
        ttfb: [],
      });
    }
    // Warm-up (JIT, caches: a server reaches its steady rate after several seconds under load),
    // then the slices: A B, B A, A B, … so that neither always goes first.
    for (const s of sides) await closedLoop(s.target, null, CONNECTIONS, WARM_SECONDS * 1000);
    if (RATE > 0) {
      for (let i = 0; i < SLICES; i++) {
        for (const s of i % 2 === 0 ? sides : [...sides].reverse()) {
          const cpu0 = cpuMsOf(s.server.pid);
          const run = await openLoop(s.target, RATE, REQUESTS);
          const cpu1 = cpuMsOf(s.server.pid);
          if (cpu0 !== null && cpu1 !== null) s.cpuMs += cpu1 - cpu0;
          s.requests += REQUESTS;
          s.total.push(...run.total);
          s.ttfb.push(...run.ttfb);
        }
      }
      printLatency(sides, roots);
      return;
    }
    for (let i = 0; i < SLICES; i++) {
      for (const s of i % 2 === 0 ? sides : [...sides].reverse()) {
        const cpu0 = cpuMsOf(s.server.pid);
        const [rps] = await closedLoop(s.target, null, CONNECTIONS, SLICE_MS);
        const cpu1 = cpuMsOf(s.server.pid);
        if (cpu0 === null || cpu1 === null) throw new Error("no /proc: CPU time cannot be read here");
        s.cpuMs += cpu1 - cpu0;
        s.requests += (rps * SLICE_MS) / 1000;
      }
    }
    console.log(
      `\n${SLICES} slices of ${SLICE_MS} ms each, ${CONNECTIONS} connections, ${STREAM ? "streaming" : "JSON"}, ` +
        `GATEHOUSE_RECORDING=${RECORDING}${PG_URL ? ", records on PostgreSQL" : ""}` +
        `${NODE_ARGS.length > 0 ? `; this side: node ${NODE_ARGS.join(" ")}` : ""}${envNote()}\n`,
    );
    console.log("| build | root | requests/s | server CPU per request |");
    console.log("| --- | --- | --- | --- |");
    for (const [i, s] of sides.entries()) {
      const rps = s.requests / ((SLICES * SLICE_MS) / 1000);
      console.log(
        `| ${s.label} | ${roots[i]![1]} | ${rps.toFixed(0)} | ${(s.cpuMs / s.requests).toFixed(3)} ms |`,
      );
    }
    const [a, b] = sides as [Side, Side];
    console.log(
      `\nthis / baseline: CPU per request ${((b.cpuMs / b.requests / (a.cpuMs / a.requests)) * 100).toFixed(1)} %, ` +
        `requests/s ${((b.requests / a.requests) * 100).toFixed(1)} %`,
    );
  } finally {
    for (const s of sides) await s.server.stop();
    upstream.child.kill();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    for (const db of databases) await db.drop();
  }
}

/** `--env "K=V K2=V2"` as variables; a pair without `=` or with an empty name is refused. */
function envPairs(spec: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of spec.split(" ").filter((p) => p !== "")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new Error(`--env: "${pair}" is not NAME=VALUE`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

function envNote(): string {
  const pairs = Object.entries(EXTRA_ENV).map(([k, v]) => `${k}=${v}`);
  return pairs.length > 0 ? `; this side's environment: ${pairs.join(" ")}` : "";
}

/** The fixed-rate result: each build's pooled p50 / p99, and this - baseline. */
function printLatency(sides: Side[], roots: [string, string][]): void {
  console.log(
    `\n${SLICES} slices of ${REQUESTS} requests at ${RATE}/s each, ${STREAM ? "streaming" : "JSON"}, ` +
      `GATEHOUSE_RECORDING=${RECORDING}${envNote()}; latency from the scheduled send\n`,
  );
  const series: [string, keyof Pick<Side, "total" | "ttfb">][] = STREAM
    ? [
        ["last byte", "total"],
        ["first byte", "ttfb"],
      ]
    : [["last byte", "total"]];
  console.log("| build | root | latency | p50 | p99 |");
  console.log("| --- | --- | --- | --- | --- |");
  for (const [i, s] of sides.entries()) {
    for (const [label, k] of series) {
      console.log(
        `| ${s.label} | ${roots[i]![1]} | ${label} | ${quantile(s[k], 0.5).toFixed(3)} ms | ${quantile(s[k], 0.99).toFixed(3)} ms |`,
      );
    }
  }
  const [a, b] = sides as [Side, Side];
  for (const [label, k] of series) {
    const d50 = quantile(b[k], 0.5) - quantile(a[k], 0.5);
    const d99 = quantile(b[k], 0.99) - quantile(a[k], 0.99);
    console.log(`\nthis - baseline, ${label}: p50 ${d50.toFixed(3)} ms, p99 ${d99.toFixed(3)} ms`);
  }
  // Whatever the server did in the slices, divided by the answers: at a fixed rate this includes
  // its background work (group commits, flushes, timers), which an idle server pays per request.
  if (a.requests > 0 && b.requests > 0 && a.cpuMs > 0) {
    const per = (s: Side): number => s.cpuMs / s.requests;
    console.log(
      `server CPU per request: baseline ${per(a).toFixed(3)} ms, this ${per(b).toFixed(3)} ms ` +
        `(${((per(b) / per(a)) * 100).toFixed(1)} %)`,
    );
  }
}

await main();
