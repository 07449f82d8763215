import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childJson } from "./lib/child-process.js";
import { benchServerEnv, closedLoop, createBenchKey, gatehouseTarget, UPSTREAM_JS } from "./lib/gateway-load.js";
import { startBenchServer } from "./lib/query-server.js";
const args = process.argv.slice(2);
const stream = args.includes("--stream");
const prof = args.includes("--prof");
const recording = args.includes("--deferred") ? "deferred" : "durable";
const dir = mkdtempSync(join(tmpdir(), "gh-sat-"));
const upstream = childJson(UPSTREAM_JS);
const { port } = (await upstream.first) as { port: number };
const server = await startBenchServer(benchServerEnv(dir, port, recording), prof ? ["--cpu-prof", "--cpu-prof-dir=.scratch/prof"] : []);
const key = await createBenchKey(server.base);
const t = gatehouseTarget("x", server.base, key, stream);
await closedLoop(t, server.pid, 8, 2000);
for (let i = 0; i < 3; i++) {
  const [rps, cpu] = await closedLoop(t, server.pid, 8, 3000);
  console.log(`rps ${rps.toFixed(0)} cpu/req ${cpu?.toFixed(3)} ms`);
}
await server.stop();
upstream.child.kill();
