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
 *               streams, to the first body byte: TTFB); p50/p99 per round;
 *   saturation  closed loop: --connections keep-alive lanes, each sending its next request when the
 *               previous one is answered, for --seconds; requests/s, and the server's CPU time per
 *               request (all its threads, from /proc), which a busy machine disturbs far less.
 * The load runs in a third process. Rounds (--rounds) are interleaved in a shuffled order per round;
 * medians over rounds are reported, with added latency = through - direct of the same round.
 *
 * With --destinations N (default 3; 0 leaves the variant out), the organization has N enabled
 * Broadcast destinations (OTLP/HTTP, to local receivers in this process) for a third target,
 * "through+N dest": the same requests, measured in the same rounds, with the destinations
 * enabled only while that target runs (PATCH enabled between targets). Every generation then
 * also goes to the outbox in its acceptance transaction, and the delivery worker sends it.
 *
 *   npm run bench:gateway -- [--rounds 5] [--rate 200] [--requests 1000] [--seconds 3]
 *                            [--connections 8] [--destinations 3] [--server-prof DIR]
 *                            [--recording durable|deferred]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { numberOption } from "./lib/args.js";
import { startBenchServer } from "./lib/query-server.js";

const ROOT = resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const opt = numberOption(args);
const ROUNDS = opt("rounds", 5);
const RATE = opt("rate", 200);
const REQUESTS = opt("requests", 1000);
const SECONDS = opt("seconds", 3);
const CONNECTIONS = opt("connections", 8);
const DESTINATIONS = opt("destinations", 3);
const profAt = args.indexOf("--server-prof");
const serverProf = profAt >= 0 ? (args[profAt + 1] ?? "server-prof") : null;
const recordingAt = args.indexOf("--recording");
/** GATEHOUSE_RECORDING of the server: durable (the default) or deferred (docs/gateway.md). */
const RECORDING = recordingAt >= 0 ? (args[recordingAt + 1] ?? "durable") : "durable";

/**
 * The upstream: an OpenAI-compatible chat endpoint answering at once. Non-streaming: one
 * chat.completion with usage. Streaming: a role chunk, three content chunks, a finish chunk, a
 * usage chunk, [DONE] (as OpenAI sends with stream_options.include_usage).
 */
const UPSTREAM_JS = `
import { createServer } from "node:http";
let n = 0;
const server = createServer((req, res) => {
  const parts = [];
  req.on("data", (c) => parts.push(c));
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    const id = "chatcmpl-" + ++n;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model;
    const usage = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };
    if (!body.stream) {
      const text = JSON.stringify({ id, object: "chat.completion", created, model, system_fingerprint: null,
        choices: [{ index: 0, message: { role: "assistant", content: "Hello there, bench friend." }, finish_reason: "stop" }],
        usage });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const chunk = (delta, finish, extra) => "data: " + JSON.stringify({ id, object: "chat.completion.chunk", created, model,
      choices: delta ? [{ index: 0, delta, finish_reason: finish }] : [], ...extra }) + "\\n\\n";
    res.write(chunk({ role: "assistant", content: "" }, null));
    for (const w of ["Hello there,", " bench", " friend."]) res.write(chunk({ content: w }, null));
    res.write(chunk({}, "stop"));
    res.write(chunk(null, null, { usage }));
    res.end("data: [DONE]\\n\\n");
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(JSON.stringify({ port: server.address().port }) + "\\n"));
`;

/**
 * A bare proxy: the floor of any gateway on this machine. node:http in, the body parsed and
 * written again (a gateway must read the model and rewrite the body), forwarded over undici's
 * keep-alive pool to the upstream, the answer piped back. No auth, no accounting, no logging.
 * Gatehouse against it shows what Gatehouse's own work costs beyond the extra HTTP hop.
 */
const PROXY_JS = `
import { createServer } from "node:http";
import { Pool } from "undici";
const pool = new Pool("http://127.0.0.1:" + process.argv[1], { connections: 64 });
const server = createServer((req, res) => {
  const parts = [];
  req.on("data", (c) => parts.push(c));
  req.on("end", async () => {
    try {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
      body.model = "tiny";
      const up = await pool.request({ method: "POST", path: "/v1/chat/completions",
        headers: { "content-type": "application/json", authorization: "Bearer bench-upstream" },
        body: JSON.stringify(body) });
      res.writeHead(up.statusCode, { "content-type": up.headers["content-type"] });
      for await (const chunk of up.body) res.write(chunk);
      res.end();
    } catch (err) {
      res.writeHead(502);
      res.end(String(err));
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(JSON.stringify({ port: server.address().port }) + "\\n"));
`;

/**
 * The load. mode "open": count requests at rate/s, each sent at its scheduled time over a
 * keep-alive agent (sockets grow as needed); per request the latency from the schedule to the
 * first body byte and to the end, and the x-gatehouse-overhead-ms header when present. mode
 * "closed": connections lanes for ms; requests/s. Any non-2xx fails the run.
 */
const LOAD_JS = `
import { Agent, request } from "node:http";
const { mode, url, headers, body, rate, count, connections, ms } = JSON.parse(process.argv[1]);
const agent = new Agent({ keepAlive: true, maxSockets: mode === "open" ? 256 : connections });
const len = String(Buffer.byteLength(body));
const one = (t0) => new Promise((ok, fail) => {
  const req = request(url, { method: "POST", agent, headers: { ...headers, "content-length": len } }, (res) => {
    let first = -1;
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (c) => { if (first < 0) first = performance.now(); if (text.length < 500) text += c; });
    res.on("end", () => {
      const end = performance.now();
      if (res.statusCode < 200 || res.statusCode >= 300) return fail(new Error(res.statusCode + " " + text));
      if (!text.includes("bench")) return fail(new Error("unexpected answer: " + text));
      const oh = res.headers["x-gatehouse-overhead-ms"];
      ok({ ttfb: first - t0, total: end - t0, overhead: oh === undefined ? null : Number(oh) });
    });
  });
  req.on("error", fail);
  req.end(body);
});
let out;
try {
  if (mode === "open") {
    const gap = 1000 / rate;
    const start = performance.now() + 20;
    const results = [];
    const pending = [];
    for (let i = 0; i < count; i++) {
      const at = start + i * gap;
      const wait = at - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
      while (performance.now() < at) {} // the last half millisecond, spun: setTimeout is coarse
      pending.push(one(at).then((r) => results.push(r)));
    }
    await Promise.all(pending);
    out = { results };
  } else {
    let done = 0;
    const deadline = performance.now() + ms;
    const lane = async () => { while (performance.now() < deadline) { await one(performance.now()); done++; } };
    const started = performance.now();
    await Promise.all(Array.from({ length: connections }, lane));
    out = { rps: (done * 1000) / (performance.now() - started) };
  }
} catch (err) { out = { error: String(err) }; }
process.stdout.write(JSON.stringify(out) + "\\n");
agent.destroy();
`;

function childJson(js: string, argv: string[] = []): { child: ChildProcess; first: Promise<unknown> } {
  const child = spawn(process.execPath, ["--input-type=module", "-e", js, ...argv], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const first = new Promise<unknown>((done, fail) => {
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d: string) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl >= 0) done(JSON.parse(out.slice(0, nl)));
    });
    child.once("exit", (code) => fail(new Error(`child exited with ${String(code)}`)));
  });
  return { child, first };
}

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Run before each measurement of this target (e.g. enable or disable destinations). */
  before?: () => Promise<void>;
}

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

interface OpenRun {
  ttfb: number[];
  total: number[];
  overhead: number[];
}

async function open(t: Target, count = REQUESTS): Promise<OpenRun> {
  await t.before?.();
  const { first } = childJson(LOAD_JS, [JSON.stringify({ mode: "open", ...t, rate: RATE, count })]);
  const r = (await first) as
    { results: { ttfb: number; total: number; overhead: number | null }[] } | { error: string };
  if ("error" in r) throw new Error(`${t.name}: ${r.error}`);
  return {
    ttfb: r.results.map((x) => x.ttfb),
    total: r.results.map((x) => x.total),
    overhead: r.results.flatMap((x) => (x.overhead === null ? [] : [x.overhead])),
  };
}

/** CPU time (user + system, every thread) of a process so far, in ms; null off Linux. */
function cpuMsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks: 100 Hz
  } catch {
    return null;
  }
}

/**
 * Saturation: requests/s, and the CPU time `pid` (the server, when given) spent per request
 * meanwhile, in ms. CPU per request hardly depends on what else runs on the machine, unlike
 * requests/s.
 */
async function closed(t: Target, pid: number | null, ms = SECONDS * 1000): Promise<[number, number | null]> {
  await t.before?.();
  const cpu0 = pid === null ? null : cpuMsOf(pid);
  const { first } = childJson(LOAD_JS, [
    JSON.stringify({ mode: "closed", ...t, connections: CONNECTIONS, ms }),
  ]);
  const r = (await first) as { rps: number } | { error: string };
  if ("error" in r) throw new Error(`${t.name}: ${r.error}`);
  const cpu1 = pid === null ? null : cpuMsOf(pid);
  const perRequest = cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / ((r.rps * ms) / 1000);
  return [r.rps, perRequest];
}

async function call(url: string, method: string, key: string, body?: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

const quantile = (xs: readonly number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return ((s[(s.length - 1) >> 1] as number) + (s[s.length >> 1] as number)) / 2;
};
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
    const providersFile = join(dir, "providers.json");
    writeFileSync(
      providersFile,
      JSON.stringify({
        providers: [
          {
            slug: "bench",
            kind: "openai-compatible",
            base_url: `http://127.0.0.1:${port}/v1`,
            api_key: "bench-upstream",
          },
        ],
        models: [
          {
            id: "bench/tiny",
            provider: "bench",
            upstream_model: "tiny",
            prompt_price: 0.000001,
            completion_price: 0.000002,
            context_length: 8192,
            max_completion_tokens: 1024,
          },
        ],
      }),
    );
    const managementKey = `sk-gh-v1-bench-${"m".repeat(40)}`;
    const big = "1000000";
    server = await startBenchServer(
      {
        GATEHOUSE_DATA_DIR: dir,
        GATEHOUSE_BOOTSTRAP_KEY: managementKey,
        GATEHOUSE_PROVIDERS_FILE: providersFile,
        LOG_LEVEL: "info",
        RATE_LIMIT_MANAGEMENT_MAX: big,
        RATE_LIMIT_INFERENCE_MAX: big,
        GATEHOUSE_RECORDING: RECORDING,
      },
      serverProf ? [`--cpu-prof`, `--cpu-prof-dir=${serverProf}`] : [],
    );
    const created = (await call(`${server.base}/keys`, "POST", managementKey, {
      name: "bench key",
      limit: 100_000,
    })) as {
      key: string;
    };
    await call(`${server.base}/workspaces/default/budgets/monthly`, "PUT", managementKey, {
      limit_usd: 100_000,
    });
    const messages = [{ role: "user", content: "Say hello to the benchmark." }];
    const json = { "content-type": "application/json" };
    const destinationIds: string[] = [];
    for (let i = 0; i < DESTINATIONS; i++) {
      const d = (await call(`${server.base}/observability/destinations`, "POST", managementKey, {
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
        await call(`${server!.base}/observability/destinations/${id}`, "PATCH", managementKey, {
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
        headers: { ...json, authorization: "Bearer bench-upstream" },
        body: JSON.stringify({ model: "tiny", messages, max_tokens: 16, stream }),
      });
      const through = {
        url: `${server.base}/chat/completions`,
        headers: { ...json, authorization: `Bearer ${created.key}` },
        body: JSON.stringify({ model: "bench/tiny", messages, max_tokens: 16, stream }),
      };
      targets.push({
        name: `proxy ${kind}`,
        url: `http://127.0.0.1:${proxyPort}/v1/chat/completions`,
        headers: json,
        body: JSON.stringify({ model: "bench/tiny", messages, max_tokens: 16, stream }),
      });
      targets.push({ name: `through ${kind}`, ...through, before: destinationsEnabled(false) });
      if (DESTINATIONS > 0) {
        targets.push({ name: `dest ${kind}`, ...through, before: destinationsEnabled(true) });
      }
    }
    // Warm-up: a short open-loop pass and a short closed-loop pass over each (JIT, caches).
    for (const t of targets) {
      await open(t, Math.min(400, REQUESTS));
      await closed(t, null, 1000);
    }
    const opened = new Map<string, OpenRun[]>(targets.map((t) => [t.name, []]));
    const sat = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const cpu = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const t of [...targets].sort(() => Math.random() - 0.5)) opened.get(t.name)!.push(await open(t));
      for (const t of [...targets].sort(() => Math.random() - 0.5)) {
        const pid = t.name.startsWith("direct")
          ? null
          : t.name.startsWith("proxy")
            ? (proxy.child.pid ?? null)
            : server.pid;
        const [rps, perRequest] = await closed(t, pid);
        sat.get(t.name)!.push(rps);
        if (perRequest !== null) cpu.get(t.name)!.push(perRequest);
      }
      process.stderr.write(`round ${r + 1}/${ROUNDS} done\n`);
    }

    console.log(
      `\n${ROUNDS} rounds; fixed rate ${RATE} requests/s open loop, ${REQUESTS} requests a round; ` +
        `saturation ${CONNECTIONS} keep-alive connections for ${SECONDS} s a round. Medians over rounds. ` +
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
    console.log(
      "\nGatehouse against the bare proxy, same rounds (what Gatehouse adds beyond the extra hop)\n",
    );
    console.log(
      "| mode | added p50 | added p99 | saturation through/proxy | CPU per request through / proxy |",
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
          `${gc.length > 0 && pc.length > 0 ? `${ms(median(gc))} / ${ms(median(pc))}` : "(no /proc)"} |`,
      );
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
