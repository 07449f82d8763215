/**
 * Where a request's CPU goes, by thread of the server: the main thread (the event loop), libuv's
 * pool, V8's platform threads (compilation, GC helpers), DuckDB's threads, and the rest, at a
 * fixed rate (requests one at a time, as a quiet gateway sees them) and at saturation (closed
 * loop), after a warm-up. One Gatehouse with the bench's settings (bench/gateway.ts: durable
 * recording, key limit and workspace budget), one local upstream.
 *
 * Threads are told apart by /proc: the main thread's id is the process's; on Node 20 the others
 * (libuv's pool, V8's platform threads, DuckDB's) are all named `node`, grouped as "other node",
 * and a thread with another name gets a row of its own.
 *
 *   npx tsx bench/experiments/thread-cpu.ts [--rate 50] [--requests 1000] [--connections 32]
 *                                           [--seconds 5] [--stream] [--prof-dir DIR]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { numberOption, stringOption } from "../lib/args.js";
import { childJson, cpuMsOf } from "../lib/child-process.js";
import {
  benchServerEnv,
  closedLoop,
  createBenchKey,
  gatehouseTarget,
  openLoop,
  UPSTREAM_JS,
} from "../lib/gateway-load.js";
import { startBenchServer } from "../lib/query-server.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const RATE = opt("rate", 50);
const REQUESTS = opt("requests", 1000);
const CONNECTIONS = opt("connections", 32);
const SECONDS = opt("seconds", 5);
const STREAM = args.includes("--stream");
/** `--prof-dir DIR`: the server writes a CPU profile of its main thread there (--cpu-prof). */
const PROF_DIR = stringOption(args)("prof-dir");

/** CPU ms of each thread of `pid`, by thread id, with its name. */
function threads(pid: number): Map<number, { name: string; ms: number }> {
  const out = new Map<number, { name: string; ms: number }>();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const tid = Number(t);
    const ms = cpuMsOf(pid, tid);
    if (ms === null) continue;
    const name = readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim();
    out.set(tid, { name, ms });
  }
  return out;
}

/** The growth between two readings, per request, grouped by kind of thread. */
function perRequest(
  pid: number,
  before: ReturnType<typeof threads>,
  after: ReturnType<typeof threads>,
  n: number,
) {
  const groups = new Map<string, number>();
  for (const [tid, a] of after) {
    const grew = a.ms - (before.get(tid)?.ms ?? 0);
    const group = tid === pid ? "main thread" : a.name === "node" ? "other node" : a.name;
    groups.set(group, (groups.get(group) ?? 0) + grew);
  }
  const total = [...groups.values()].reduce((s, x) => s + x, 0);
  return {
    total: total / n,
    groups: [...groups].sort((x, y) => y[1] - x[1]).map(([g, ms]) => [g, ms / n] as const),
  };
}

const upstream = childJson(UPSTREAM_JS);
const dir = mkdtempSync(join(tmpdir(), "gatehouse-thread-cpu-"));
try {
  const { port } = (await upstream.first) as { port: number };
  const server = await startBenchServer(
    benchServerEnv(dir, port, "durable"),
    PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROF_DIR}`, "--cpu-prof-interval", "250"] : [],
  );
  try {
    const key = await createBenchKey(server.base);
    const target = gatehouseTarget("gatehouse", server.base, key, STREAM);
    await closedLoop(target, null, CONNECTIONS, 5_000);
    const print = (what: string, r: ReturnType<typeof perRequest>) => {
      console.log(`\n${what}: ${r.total.toFixed(3)} ms of CPU per request\n`);
      console.log("| thread | ms per request | share |");
      console.log("| --- | --- | --- |");
      for (const [g, ms] of r.groups)
        console.log(`| ${g} | ${ms.toFixed(3)} | ${((100 * ms) / r.total).toFixed(1)} % |`);
    };
    let t0 = threads(server.pid);
    await openLoop(target, RATE, REQUESTS);
    print(
      `${RATE} requests/s, ${REQUESTS} requests`,
      perRequest(server.pid, t0, threads(server.pid), REQUESTS),
    );
    t0 = threads(server.pid);
    const [rps] = await closedLoop(target, null, CONNECTIONS, SECONDS * 1000);
    const n = rps * SECONDS;
    print(
      `saturation, ${CONNECTIONS} connections (${Math.round(rps)} requests/s)`,
      perRequest(server.pid, t0, threads(server.pid), n),
    );
  } finally {
    await server.stop();
  }
} finally {
  upstream.child.kill();
  rmSync(dir, { recursive: true, force: true });
}
