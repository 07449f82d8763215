/**
 * Would a second core for the request path raise saturation on this machine? One Gatehouse
 * process against two (each on its own data directory: the embedded stores belong to one process,
 * so this is a bound, not a configuration), both against calling the upstream directly, in the
 * same rounds. Each target gets the same load: two load processes of --connections lanes each
 * (for two Gatehouse processes, one load process per server). Printed per target: requests/s
 * (median over rounds) and how idle the whole machine was meanwhile (/proc/stat).
 *
 * If two processes leave the machine less idle without more requests/s, the machine is CPU-bound
 * and only less CPU per request raises saturation (docs/performance.md).
 *
 *   npx tsx bench/experiments/gateway-processes.ts [--rounds 3] [--seconds 3] [--connections 4]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { numberOption } from "../lib/args.js";
import { childJson } from "../lib/child-process.js";
import { cpuTicks, idleShare } from "../lib/cpu-share.js";
import {
  benchServerEnv,
  chatBody,
  createBenchKey,
  gatehouseTarget,
  LOAD_JS,
  localTarget,
  UPSTREAM_JS,
  type Target,
} from "../lib/gateway-load.js";
import { startBenchServer, type BenchServer } from "../lib/query-server.js";
import { median } from "../lib/stats.js";

const opt = numberOption(process.argv.slice(2));
const ROUNDS = opt("rounds", 3);
const SECONDS = opt("seconds", 3);
const CONNECTIONS = opt("connections", 4);

/** Closed-loop load on each target at once (one load process each): total requests/s, idle %. */
async function load(targets: Target[], ms: number): Promise<{ rps: number; idle: number }> {
  const before = cpuTicks() ?? [];
  const results = (await Promise.all(
    targets.map(
      (t) =>
        childJson(LOAD_JS, [JSON.stringify({ mode: "closed", ...t, connections: CONNECTIONS, ms })]).first,
    ),
  )) as ({ rps: number } | { error: string })[];
  const idle = idleShare(before, cpuTicks() ?? []);
  let rps = 0;
  for (const r of results) {
    if ("error" in r) throw new Error(r.error);
    rps += r.rps;
  }
  return { rps, idle };
}

async function main(): Promise<void> {
  const upstream = childJson(UPSTREAM_JS);
  const servers: { server: BenchServer; key: string; dir: string }[] = [];
  try {
    const { port } = (await upstream.first) as { port: number };
    for (const n of [0, 1]) {
      const dir = mkdtempSync(join(tmpdir(), `gatehouse-bench-processes-${n}-`));
      const server = await startBenchServer(benchServerEnv(dir, port, "durable"));
      servers.push({ server, key: await createBenchKey(server.base), dir });
    }
    console.log(
      `${ROUNDS} rounds of ${SECONDS} s, two load processes of ${CONNECTIONS} keep-alive connections per target, durable recording`,
    );
    console.log("");
    console.log("| mode | direct | one process | two processes | idle: direct / one / two |");
    console.log("| --- | --- | --- | --- | --- |");
    for (const stream of [false, true]) {
      const direct = localTarget(port, "/v1/chat/completions", chatBody("tiny", stream), "direct");
      const [a, b] = servers.map(({ server, key }) =>
        gatehouseTarget("gatehouse", server.base, key, stream),
      ) as [Target, Target];
      const plans: [string, Target[]][] = [
        ["direct", [direct, direct]],
        ["one", [a, a]],
        ["two", [a, b]],
      ];
      await load([a, b], 3000); // warm both servers (JIT, first flushes)
      const rps = new Map<string, number[]>(plans.map(([name]) => [name, []]));
      const idle = new Map<string, number[]>(plans.map(([name]) => [name, []]));
      for (let r = 0; r < ROUNDS; r++) {
        for (const [name, targets] of plans) {
          const m = await load(targets, SECONDS * 1000);
          rps.get(name)?.push(m.rps);
          idle.get(name)?.push(m.idle);
        }
      }
      const d = median(rps.get("direct") ?? []);
      const cell = (name: string) => {
        const v = median(rps.get(name) ?? []);
        return `${v.toFixed(0)} (${((100 * v) / d).toFixed(1)} % of direct)`;
      };
      const idles = plans.map(([name]) => `${median(idle.get(name) ?? []).toFixed(0)} %`).join(" / ");
      console.log(
        `| ${stream ? "stream" : "json"} | ${d.toFixed(0)} | ${cell("one")} | ${cell("two")} | ${idles} |`,
      );
    }
  } finally {
    for (const { server, dir } of servers) {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    upstream.child.kill();
  }
}

await main();
