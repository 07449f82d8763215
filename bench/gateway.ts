/**
 * The gateway's data plane against calling its upstream directly, side by side in one run (the
 * machine is shared and noisy: only numbers measured together mean anything).
 *
 *   (direct)  POST /v1/chat/completions on a local OpenAI-compatible upstream that answers at once
 *             (node:http in a child process; the OpenAI chat shape with usage, JSON or SSE);
 *   (through) POST /api/v1/chat/completions on Gatehouse: the real composition root (src/main.ts,
 *             embedded SQLite + DuckDB, request logs at info level drained) in a child process, with
 *             a providers file routing `bench/tiny` to that upstream, an ordinary key with a limit and
 *             a monthly workspace budget, so auth, reservation, forwarding and recording all run.
 * Each is measured non-streaming and streaming, two ways:
 *   fixed rate  open loop: --rate requests/s for --requests requests, each sent at its scheduled time
 *               whatever the others do; latency from the scheduled time to the last byte (and, for
 *               streams, to the first body byte: TTFB); p50/p99 per round; and the server's CPU
 *               time per request meanwhile;
 *   saturation  closed loop: keep-alive lanes, each sending its next request when the previous one
 *               is answered, for --seconds, at each count of --connections (default 8 and 32): the
 *               round's saturation is the best of them, per target; requests/s, the server's CPU time per
 *               request (all its threads, from /proc), which a busy machine disturbs far less, and
 *               the share of wall time the server's main thread ran and waited for a CPU, with the
 *               machine's idle share (bench/lib/cpu-share.ts): whether the event loop is the bound.
 * The load runs in a third process. Rounds (--rounds) are interleaved in a shuffled order per round;
 * medians over rounds are reported, with added latency = through - direct of the same round.
 *
 * With --destinations N (default 3; 0 leaves the variant out), the organization has N enabled
 * Broadcast destinations (OTLP/HTTP, to local receivers in this process) for a third target,
 * "through+N dest": the same requests, measured in the same rounds, with the destinations
 * enabled only while that target runs (PATCH enabled between targets). Every generation then
 * also goes to the outbox in its acceptance transaction, and the delivery worker sends it.
 *
 * Before the rounds, each target is warmed: --warm-seconds (default 10) of closed loop on each
 * server (a Node server under load reaches its steady rate after several seconds: JIT), 1 s on
 * the upstream.
 *
 *   npm run bench:gateway -- [--rounds 5] [--rate 200] [--requests 1000] [--seconds 3]
 *                            [--connections 8,32] [--destinations 3] [--server-prof DIR]
 *                            [--recording durable|deferred] [--warm-seconds 10] [--load wrk|node]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { numberOption, stringOption } from "./lib/args.js";
import { childJson, cpuMsOf } from "./lib/child-process.js";
import { cpuShareWindow, type CpuShare } from "./lib/cpu-share.js";
import {
  BENCH_MANAGEMENT_KEY,
  benchServerEnv,
  chatBody,
  closedLoop,
  closedLoopWrk,
  createBenchKey,
  gatehouseTarget,
  localTarget,
  openLoop,
  PROXY_JS,
  UPSTREAM_JS,
  type OpenRun,
  type Target,
  wrkAvailable,
} from "./lib/gateway-load.js";
import { call } from "./lib/http-clients.js";
import { startBenchServer } from "./lib/query-server.js";
import { median, quantile } from "./lib/stats.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const text = stringOption(args);
const ROUNDS = opt("rounds", 5);
const RATE = opt("rate", 200);
const REQUESTS = opt("requests", 1000);
const SECONDS = opt("seconds", 3);
/**
 * Saturation's connection counts (`--connections 8,32`): each target is measured at each, and its
 * saturation is the best of them in that round. One count is not saturation for every target: at
 * 8 lanes the upstream alone is at its peak, while a server with more work per request still has
 * CPU left (the machine idle) that more requests in flight would use.
 */
const CONNECTIONS = (text("connections") ?? "8,32").split(",").map((c) => {
  const n = Number(c);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--connections: ${c} is not a positive integer`);
  return n;
});
const DESTINATIONS = opt("destinations", 3);
/** Closed-loop warm-up of each server target before the rounds, in seconds. */
const WARM_SECONDS = opt("warm-seconds", 10);
const serverProf = args.includes("--server-prof") ? (text("server-prof") ?? "server-prof") : null;
/** GATEHOUSE_RECORDING of the server: durable (the default) or deferred (docs/gateway.md). */
const RECORDING = text("recording") ?? "durable";

/** Local OTLP/HTTP receivers: one server, a path per destination; counts the spans received. */
async function startReceivers(): Promise<{ server: Server; url: string; spans: () => number }> {
  let spans = 0;
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8");
      spans += text.split('"gen_ai.response.id"').length - 1;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, spans: () => spans };
}

const open = (t: Target, count = REQUESTS): Promise<OpenRun> => openLoop(t, RATE, count);
/**
 * What drives saturation (`--load wrk|node`): wrk where it is installed (`apt-get install wrk`), a
 * load generator that is not itself the bottleneck; otherwise the Node load process, which caps
 * the direct upstream's rate on a 2-core machine (ratios "of direct" then read high).
 */
const LOAD = text("load") ?? (wrkAvailable() ? "wrk" : "node");
if (LOAD !== "wrk" && LOAD !== "node") throw new Error(`--load: ${LOAD} is not wrk or node`);
const closed = (
  t: Target,
  pid: number | null,
  ms = SECONDS * 1000,
  connections = CONNECTIONS[0]!,
): Promise<[number, number | null]> =>
  LOAD === "wrk" ? closedLoopWrk(t, pid, connections, ms) : closedLoop(t, pid, connections, ms);

const ms = (x: number): string => `${x.toFixed(2)} ms`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-gateway-"));
  const upstream = childJson(UPSTREAM_JS);
  const receivers = DESTINATIONS > 0 ? await startReceivers() : null;
  let server: Awaited<ReturnType<typeof startBenchServer>> | null = null;
  let proxy: ReturnType<typeof childJson> | null = null;
  try {
    const { port } = (await upstream.first) as { port: number };
    proxy = childJson(PROXY_JS, [String(port)]);
    const { port: proxyPort } = (await proxy.first) as { port: number };
    server = await startBenchServer(
      benchServerEnv(dir, port, RECORDING),
      serverProf ? [`--cpu-prof`, `--cpu-prof-dir=${serverProf}`] : [],
    );
    const key = await createBenchKey(server.base);
    const destinationIds: string[] = [];
    for (let i = 0; i < DESTINATIONS; i++) {
      const d = (await call(`${server.base}/observability/destinations`, "POST", BENCH_MANAGEMENT_KEY, {
        name: `bench receiver ${i}`,
        type: "otel-collector",
        config: { endpoint: `${receivers!.url}/r${i}/v1/traces` },
        enabled: false,
      })) as { data: { id: string } };
      destinationIds.push(d.data.id);
    }
    let enabled = false;
    const destinationsEnabled = (on: boolean) => async () => {
      if (enabled === on) return;
      for (const id of destinationIds) {
        await call(`${server!.base}/observability/destinations/${id}`, "PATCH", BENCH_MANAGEMENT_KEY, {
          enabled: on,
        });
      }
      enabled = on;
    };
    const targets: Target[] = [];
    for (const stream of [false, true]) {
      const kind = stream ? "stream" : "json";
      targets.push({
        name: `direct ${kind}`,
        url: `http://127.0.0.1:${port}/v1/chat/completions`,
        headers: { "content-type": "application/json", authorization: "Bearer bench-upstream" },
        body: chatBody("tiny", stream),
      });
      const through = gatehouseTarget(`through ${kind}`, server.base, key, stream);
      targets.push(
        localTarget(proxyPort, "/v1/chat/completions", chatBody("bench/tiny", stream), `proxy ${kind}`),
      );
      targets.push({ ...through, before: destinationsEnabled(false) });
      if (DESTINATIONS > 0) {
        targets.push({ ...through, name: `dest ${kind}`, before: destinationsEnabled(true) });
      }
    }
    // Warm-up: a short open-loop pass over each, then a closed-loop pass (JIT, caches): a server
    // reaches its steady rate after several seconds under load (docs/performance.md), the upstream
    // at once.
    for (const t of targets) {
      await open(t, Math.min(400, REQUESTS));
      await closed(t, null, t.name.startsWith("direct") ? 1000 : WARM_SECONDS * 1000);
    }
    const opened = new Map<string, OpenRun[]>(targets.map((t) => [t.name, []]));
    const sat = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const cpu = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const shares = new Map<string, CpuShare[]>(targets.map((t) => [t.name, []]));
    const openCpu = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    /** Requests/s per round at each connection count ("<target> @<count>"). */
    const atCount = new Map<string, number[]>(
      targets.flatMap((t) => CONNECTIONS.map((c): [string, number[]] => [`${t.name} @${c}`, []])),
    );
    const pidOf = (t: Target): number | null =>
      t.name.startsWith("direct")
        ? null
        : t.name.startsWith("proxy")
          ? (proxy!.child.pid ?? null)
          : server!.pid;
    for (let r = 0; r < ROUNDS; r++) {
      for (const t of [...targets].sort(() => Math.random() - 0.5)) {
        const pid = pidOf(t);
        const cpu0 = pid === null ? null : cpuMsOf(pid);
        opened.get(t.name)!.push(await open(t));
        const cpu1 = pid === null ? null : cpuMsOf(pid);
        if (cpu0 !== null && cpu1 !== null) openCpu.get(t.name)!.push((cpu1 - cpu0) / REQUESTS);
      }
      for (const t of [...targets].sort(() => Math.random() - 0.5)) {
        const pid = pidOf(t);
        // Each connection count in turn; the round's saturation is the best of them.
        let best: { rps: number; perRequest: number | null; share: CpuShare | null } | null = null;
        for (const c of CONNECTIONS) {
          const window = pid === null ? null : cpuShareWindow(pid);
          const [rps, perRequest] = await closed(t, pid, SECONDS * 1000, c);
          const share = window?.() ?? null;
          atCount.get(`${t.name} @${c}`)!.push(rps);
          if (best === null || rps > best.rps) best = { rps, perRequest, share };
        }
        sat.get(t.name)!.push(best!.rps);
        if (best!.perRequest !== null) cpu.get(t.name)!.push(best!.perRequest);
        if (best!.share !== null) shares.get(t.name)!.push(best!.share);
      }
      process.stderr.write(`round ${r + 1}/${ROUNDS} done\n`);
    }

    console.log(
      `\n${ROUNDS} rounds; fixed rate ${RATE} requests/s open loop, ${REQUESTS} requests a round; ` +
        `saturation: the best of ${CONNECTIONS.join(", ")} keep-alive connections, ${SECONDS} s each a round, ` +
        `driven by ${LOAD === "wrk" ? "wrk (one thread)" : "a Node load process (wrk is not installed: ratios of direct read high)"}. ` +
        `Medians over rounds. ` +
        `GATEHOUSE_RECORDING=${RECORDING}.\n`,
    );
    console.log("Fixed rate: latency from scheduled send to the last byte (TTFB: to the first body byte)\n");
    console.log("| mode | direct p50 | through p50 | added p50 | direct p99 | through p99 | added p99 |");
    console.log("| --- | --- | --- | --- | --- | --- | --- |");
    const added = (a: OpenRun[], b: OpenRun[], pick: (o: OpenRun) => number[], q: number): number =>
      median(a.map((x, i) => quantile(pick(b[i]!), q) - quantile(pick(x), q)));
    const med = (runs: OpenRun[], pick: (o: OpenRun) => number[], q: number): number =>
      median(runs.map((x) => quantile(pick(x), q)));
    const variants = (kind: string): [string, string][] => [
      [" (bare proxy)", `proxy ${kind}`],
      ["", `through ${kind}`],
      ...(DESTINATIONS > 0 ? ([[`, ${DESTINATIONS} dest`, `dest ${kind}`]] as [string, string][]) : []),
    ];
    for (const kind of ["json", "stream"]) {
      const d = opened.get(`direct ${kind}`)!;
      for (const [suffix, name] of variants(kind)) {
        const g = opened.get(name)!;
        const rows: [string, (o: OpenRun) => number[]][] = [[`${kind} total${suffix}`, (o) => o.total]];
        if (kind === "stream") rows.push([`stream TTFB${suffix}`, (o) => o.ttfb]);
        for (const [label, pick] of rows) {
          console.log(
            `| ${label} | ${ms(med(d, pick, 0.5))} | ${ms(med(g, pick, 0.5))} | ${ms(added(d, g, pick, 0.5))} | ` +
              `${ms(med(d, pick, 0.99))} | ${ms(med(g, pick, 0.99))} | ${ms(added(d, g, pick, 0.99))} |`,
          );
        }
      }
    }
    console.log("\nx-gatehouse-overhead-ms header at the fixed rate (the server's own time)\n");
    console.log("| mode | p50 | p90 | p99 | max |");
    console.log("| --- | --- | --- | --- | --- |");
    for (const kind of ["json", "stream"]) {
      for (const [suffix, name] of variants(kind).filter(([, n]) => !n.startsWith("proxy"))) {
        const all = opened.get(name)!.flatMap((o) => o.overhead);
        if (all.length === 0) {
          console.log(`| ${kind}${suffix} | (no header) | | | |`);
          continue;
        }
        console.log(
          `| ${kind}${suffix} | ${ms(quantile(all, 0.5))} | ${ms(quantile(all, 0.9))} | ${ms(quantile(all, 0.99))} | ` +
            `${ms(Math.max(...all))} |`,
        );
      }
    }
    console.log("\nSaturation: requests/s (range over rounds)\n");
    console.log("| mode | direct | through | through/direct | server CPU per request |");
    console.log("| --- | --- | --- | --- | --- |");
    const range = (xs: number[]) =>
      `${Math.round(median(xs))} (${Math.round(Math.min(...xs))}-${Math.round(Math.max(...xs))})`;
    for (const kind of ["json", "stream"]) {
      const d = sat.get(`direct ${kind}`)!;
      for (const [suffix, name] of variants(kind)) {
        const g = sat.get(name)!;
        const ratio = median(d.map((x, i) => g[i]! / x));
        const c = cpu.get(name)!;
        const perRequest = c.length > 0 ? ms(median(c)) : "(no /proc)";
        console.log(
          `| ${kind}${suffix} | ${range(d)} | ${range(g)} | ${(ratio * 100).toFixed(1)} % | ${perRequest} |`,
        );
      }
    }
    if (CONNECTIONS.length > 1) {
      console.log("\nSaturation at each connection count: requests/s, and through/direct at that count\n");
      console.log(`| mode | ${CONNECTIONS.map((c) => `${c} connections`).join(" | ")} |`);
      console.log(`| --- | ${CONNECTIONS.map(() => "---").join(" | ")} |`);
      for (const kind of ["json", "stream"]) {
        for (const [suffix, name] of [["", `direct ${kind}`] as [string, string], ...variants(kind)]) {
          const cells = CONNECTIONS.map((c) => {
            const g = atCount.get(`${name} @${c}`)!;
            if (name.startsWith("direct")) return `${Math.round(median(g))}`;
            const d = atCount.get(`direct ${kind} @${c}`)!;
            return `${Math.round(median(g))} (${(median(d.map((x, i) => g[i]! / x)) * 100).toFixed(1)} %)`;
          });
          console.log(`| ${kind}${name.startsWith("direct") ? " direct" : suffix} | ${cells.join(" | ")} |`);
        }
      }
    }
    // Whether the server's event loop is the bottleneck at saturation (bench/lib/cpu-share.ts).
    console.log(
      "\nSaturation: the server's main thread (share of wall time) and the machine (medians over rounds)\n",
    );
    console.log("| mode | main thread running | main thread waiting for a CPU | machine idle |");
    console.log("| --- | --- | --- | --- |");
    const pct = (xs: number[]) => `${median(xs).toFixed(1)} %`;
    for (const kind of ["json", "stream"]) {
      for (const [suffix, name] of variants(kind)) {
        const sh = shares.get(name)!;
        if (sh.length === 0) continue;
        console.log(
          `| ${kind}${suffix} | ${pct(sh.map((x) => x.running))} | ${pct(sh.map((x) => x.waiting))} | ` +
            `${pct(sh.map((x) => x.machineIdle))} |`,
        );
      }
    }
    console.log(
      "\nGatehouse against the bare proxy, same rounds (what Gatehouse adds beyond the extra hop)\n",
    );
    // On a fast machine both figures are tenths of a millisecond: three decimals, and the ratio of
    // each round (interleaved, so both saw the same machine), its median printed.
    const cpuAgainst = (g: number[], p: number[]): string =>
      `${median(g).toFixed(3)} / ${median(p).toFixed(3)} ms (${median(g.map((x, i) => x / p[i]!)).toFixed(2)}×)`;
    console.log(
      "| mode | added p50 | added p99 | saturation through/proxy | CPU per request through / proxy (ratio) |",
    );
    console.log("| --- | --- | --- | --- | --- |");
    for (const kind of ["json", "stream"]) {
      const p = opened.get(`proxy ${kind}`)!;
      const g = opened.get(`through ${kind}`)!;
      const total = (o: OpenRun) => o.total;
      const ps = sat.get(`proxy ${kind}`)!;
      const gs = sat.get(`through ${kind}`)!;
      const pc = cpu.get(`proxy ${kind}`)!;
      const gc = cpu.get(`through ${kind}`)!;
      console.log(
        `| ${kind} | ${ms(added(p, g, total, 0.5))} | ${ms(added(p, g, total, 0.99))} | ` +
          `${(median(ps.map((x, i) => gs[i]! / x)) * 100).toFixed(1)} % | ` +
          `${gc.length > 0 && pc.length > 0 ? cpuAgainst(gc, pc) : "(no /proc)"} |`,
      );
    }
    // The same code costs far more per request when requests come one at a time: between them the
    // CPU's caches and predictors serve other work (docs/performance.md, "Cold requests").
    console.log(
      "\nServer CPU per request (all threads): at the fixed rate, at saturation, and their ratio\n",
    );
    console.log("| mode | fixed rate | saturation | fixed / saturation |");
    console.log("| --- | --- | --- | --- |");
    for (const kind of ["json", "stream"]) {
      for (const [suffix, name] of variants(kind)) {
        const o = openCpu.get(name)!;
        const c = cpu.get(name)!;
        if (o.length === 0 || c.length === 0) continue;
        console.log(
          `| ${kind}${suffix} | ${ms(median(o))} | ${ms(median(c))} | ${(median(o) / median(c)).toFixed(1)}× |`,
        );
      }
    }
    if (DESTINATIONS > 0) {
      console.log(
        `\nWith ${DESTINATIONS} destinations against without, same rounds (medians of per-round ratios):\n`,
      );
      for (const kind of ["json", "stream"]) {
        const g = sat.get(`through ${kind}`)!;
        const x = sat.get(`dest ${kind}`)!;
        const p50 = (o: OpenRun) => quantile(o.total, 0.5);
        const without = opened.get(`through ${kind}`)!;
        const withDest = opened.get(`dest ${kind}`)!;
        const dp50 = median(withDest.map((o, i) => p50(o) - p50(without[i]!)));
        console.log(
          `- ${kind}: saturation ${(median(x.map((v, i) => v / g[i]!)) * 100).toFixed(1)} % of without; ` +
            `p50 at the fixed rate ${dp50 >= 0 ? "+" : ""}${dp50.toFixed(2)} ms`,
        );
      }
      // The delivery worker sends in the background: let it catch up before counting.
      await new Promise((r) => setTimeout(r, 2_000));
      console.log(`- spans received by the local receivers: ${receivers!.spans()}`);
    }
  } finally {
    upstream.child.kill();
    proxy?.child.kill();
    receivers?.server.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
