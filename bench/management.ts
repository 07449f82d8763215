/**
 * The authenticated request path against a bare Fastify handler, side by side in one run (the
 * machine is shared and noisy: only ratios measured together mean anything).
 *
 *   (bare)   a Fastify app with one GET handler answering a small JSON object, no logger, no auth;
 *   (key)    GET /api/v1/key with an ordinary key;
 *   (budget) GET /api/v1/workspaces/default/budgets/monthly with the management key;
 *   (patch)  PATCH /api/v1/keys/{hash} {"limit": …} with the management key.
 * The Gatehouse server is the real composition root (src/main.ts, embedded SQLite + DuckDB, request
 * logs at info level written to a pipe and drained) in a child process; the bare app in another;
 * the load in a third (node:http keep-alive, --connections lanes each sending its next request when
 * the previous one is answered, for --seconds per round). Rounds are interleaved (bare, key,
 * budget, patch, in a shuffled order per round) and the median requests/s of each is reported with
 * its ratio to bare. Rate limits are raised out of the way (their checks still run).
 *
 *   npm run bench:management -- [--rounds 5] [--seconds 3] [--connections 16] [--server-prof DIR]
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { numberOption, stringOption } from "./lib/args.js";
import { childJson, cpuMsOf } from "./lib/child-process.js";
import { call } from "./lib/http-clients.js";
import { startBenchServer } from "./lib/query-server.js";
import { median } from "./lib/stats.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const ROUNDS = opt("rounds", 5);
const SECONDS = opt("seconds", 3);
const CONNECTIONS = opt("connections", 16);
const serverProf = args.includes("--server-prof")
  ? (stringOption(args)("server-prof") ?? "server-prof")
  : null;

/** The bare baseline: Fastify with one handler, as little as a Fastify service can be. */
const BARE_JS = `
import Fastify from "fastify";
const app = Fastify({ logger: false });
app.get("/bare", async () => ({ data: { ok: true, label: "sk-gh-v1-abc...xyz", usage: 0 } }));
await app.listen({ host: "127.0.0.1", port: 0 });
process.stdout.write(JSON.stringify({ port: app.server.address().port }) + "\\n");
`;

/** The load: `connections` lanes over keep-alive sockets for `ms`; counts answers, fails on a non-2xx. */
const LOAD_JS = `
import { Agent, request } from "node:http";
const { url, method, headers, body, connections, ms } = JSON.parse(process.argv[1]);
const agent = new Agent({ keepAlive: true, maxSockets: connections });
let done = 0;
let failure = null;
const deadline = performance.now() + ms;
const one = () => new Promise((ok, fail) => {
  const req = request(url, { method, agent, headers }, (res) => {
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (c) => { if (text.length < 500) text += c; });
    res.on("end", () => (res.statusCode >= 200 && res.statusCode < 300 ? ok() : fail(new Error(res.statusCode + " " + text))));
  });
  req.on("error", fail);
  req.end(body ?? undefined);
});
const lane = async () => { while (performance.now() < deadline && !failure) { await one(); done++; } };
const started = performance.now();
try { await Promise.all(Array.from({ length: connections }, lane)); } catch (err) { failure = String(err); }
const elapsed = performance.now() - started;
process.stdout.write(JSON.stringify(failure ? { error: failure } : { rps: (done * 1000) / elapsed, done }) + "\\n");
agent.destroy();
`;

interface Target {
  name: string;
  /** The server process answering it (its CPU time is read from /proc). */
  pid: number;
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

interface Sample {
  rps: number;
  /** Server CPU per answered request, µs. */
  cpuUs: number;
}

async function load(t: Target, ms = SECONDS * 1000): Promise<Sample> {
  const { pid, ...wire } = t;
  const cpu0 = cpuMsOf(pid) ?? NaN;
  const { first } = childJson(LOAD_JS, [JSON.stringify({ ...wire, connections: CONNECTIONS, ms })]);
  const r = (await first) as { rps: number; done: number } | { error: string };
  if ("error" in r) throw new Error(`${t.name}: ${r.error}`);
  return { rps: r.rps, cpuUs: (((cpuMsOf(pid) ?? NaN) - cpu0) * 1000) / r.done };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-auth-"));
  const managementKey = `sk-gh-v1-${"be".repeat(32)}`;
  const bigLimit = "1000000";
  const server = await startBenchServer(
    {
      GATEHOUSE_DATA_DIR: dir,
      GATEHOUSE_BOOTSTRAP_KEY: managementKey,
      LOG_LEVEL: "info",
      RATE_LIMIT_MANAGEMENT_MAX: bigLimit,
      RATE_LIMIT_KEY_UPDATE_MAX: bigLimit,
      RATE_LIMIT_INGEST_MAX: bigLimit,
    },
    serverProf ? [`--cpu-prof`, `--cpu-prof-dir=${serverProf}`] : [],
  );
  const bare = childJson(BARE_JS);
  let bareChild: ChildProcess | null = bare.child;
  try {
    const { port } = (await bare.first) as { port: number };
    const base = server.base;
    const created = (await call(`${base}/keys`, "POST", managementKey, { name: "bench key", limit: 5 })) as {
      key: string;
      data: { hash: string };
    };
    await call(`${base}/workspaces/default/budgets/monthly`, "PUT", managementKey, { limit_usd: 100 });
    const auth = (k: string) => ({ authorization: `Bearer ${k}` });
    const patchBody = JSON.stringify({ limit: 7 });
    const targets: Target[] = [
      {
        name: "bare Fastify",
        pid: bare.child.pid!,
        url: `http://127.0.0.1:${port}/bare`,
        method: "GET",
        headers: {},
      },
      { name: "GET /key", pid: server.pid, url: `${base}/key`, method: "GET", headers: auth(created.key) },
      {
        name: "GET budget",
        pid: server.pid,
        url: `${base}/workspaces/default/budgets/monthly`,
        method: "GET",
        headers: auth(managementKey),
      },
      {
        name: "PATCH key",
        pid: server.pid,
        url: `${base}/keys/${created.data.hash}`,
        method: "PATCH",
        headers: {
          ...auth(managementKey),
          "content-type": "application/json",
          "content-length": String(patchBody.length),
        },
        body: patchBody,
      },
    ];
    // Warm-up: one short pass over each.
    for (const t of targets) await load(t, 1000);
    const results = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      const order = [...targets].sort(() => Math.random() - 0.5);
      for (const t of order) results.get(t.name)!.push(await load(t));
      process.stderr.write(`round ${r + 1}/${ROUNDS} done\n`);
    }
    const bareSamples = results.get("bare Fastify")!;
    const bareRps = median(bareSamples.map((s) => s.rps));
    const bareCpu = median(bareSamples.map((s) => s.cpuUs));
    console.log(
      `\n${ROUNDS} rounds of ${SECONDS} s, ${CONNECTIONS} keep-alive connections; medians (range of requests/s)\n` +
        "requests/s depends on what else runs on the machine; server CPU per request much less so, and\n" +
        "its inverse (requests/s per core) is the throughput the server would reach on a core of its own.\n",
    );
    console.log(
      "| request | requests/s | range | ratio to bare | server CPU/request | requests/s per core | ratio to bare |",
    );
    console.log("| --- | --- | --- | --- | --- | --- | --- |");
    for (const t of targets) {
      const xs = results.get(t.name)!;
      const rps = median(xs.map((s) => s.rps));
      const cpu = median(xs.map((s) => s.cpuUs));
      const lo = Math.round(Math.min(...xs.map((s) => s.rps)));
      const hi = Math.round(Math.max(...xs.map((s) => s.rps)));
      const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
      console.log(
        `| ${t.name} | ${Math.round(rps)} | ${lo}-${hi} | ${pct(rps / bareRps)} | ${Math.round(cpu)} µs | ` +
          `${Math.round(1e6 / cpu)} | ${pct(bareCpu / cpu)} |`,
      );
    }
  } finally {
    bareChild?.kill();
    bareChild = null;
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
