/**
 * The load side of the gateway benchmarks (bench/gateway.ts, bench/gateway-ab.ts): a local
 * OpenAI-compatible upstream that answers at once, a bare proxy, the load process (open and closed
 * loop), and a Gatehouse server set up to route `bench/tiny` to that upstream with an ordinary key
 * (a limit and a monthly workspace budget, so that auth, reservation, forwarding and recording
 * all run). Each runs in its own child process.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childJson, cpuMsOf } from "./child-process.js";
import { call } from "./http-clients.js";

/**
 * The upstream: an OpenAI-compatible chat endpoint answering at once. Non-streaming: one
 * chat.completion with usage. Streaming: a role chunk, three content chunks, a finish chunk, a
 * usage chunk, [DONE] (as OpenAI sends with stream_options.include_usage). On /v1/messages, the
 * same answer as Anthropic's Messages API gives it (a Message; or message_start, a text block in
 * three deltas, message_delta with usage, message_stop), and on /v1/responses as OpenAI's Responses
 * API gives it (a response; or its numbered events to response.completed), for the surfaces
 * bench's native paths.
 */
export const UPSTREAM_JS = `
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
    if (req.url === "/v1/messages") return anthropic(res, body, "msg_" + n);
    if (req.url === "/v1/responses") return responses(res, body, "resp_" + n);
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
function anthropic(res, body, id) {
  const usage = { input_tokens: 12, output_tokens: 6, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  const message = { id, type: "message", role: "assistant", model: body.model, stop_sequence: null };
  if (!body.stream) {
    const text = JSON.stringify({ ...message, content: [{ type: "text", text: "Hello there, bench friend." }],
      stop_reason: "end_turn", usage });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const ev = (name, data) => "event: " + name + "\\ndata: " + JSON.stringify({ type: name, ...data }) + "\\n\\n";
  res.write(ev("message_start", { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }));
  res.write(ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }));
  for (const w of ["Hello there,", " bench", " friend."])
    res.write(ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: w } }));
  res.write(ev("content_block_stop", { index: 0 }));
  res.write(ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 6 } }));
  res.end(ev("message_stop", {}));
}
function responses(res, body, id) {
  const usage = { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 6,
    output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 18 };
  const text = "Hello there, bench friend.";
  const item = { type: "message", id: "msg_" + id, role: "assistant", status: "completed",
    content: [{ type: "output_text", text, annotations: [] }] };
  const result = (status, output, u) => ({ id, object: "response", created_at: Math.floor(Date.now() / 1000),
    status, model: body.model, output, error: null, incomplete_details: null, usage: u });
  if (!body.stream) {
    const json = JSON.stringify(result("completed", [item], usage));
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
    res.end(json);
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let seq = 0;
  const ev = (type, data) => "event: " + type + "\\ndata: " + JSON.stringify({ type, sequence_number: seq++, ...data }) + "\\n\\n";
  const at = { item_id: item.id, output_index: 0, content_index: 0 };
  res.write(ev("response.created", { response: result("in_progress", [], null) }));
  res.write(ev("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } }));
  res.write(ev("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [] } }));
  for (const w of ["Hello there,", " bench", " friend."]) res.write(ev("response.output_text.delta", { ...at, delta: w }));
  res.write(ev("response.output_text.done", { ...at, text }));
  res.write(ev("response.output_item.done", { output_index: 0, item }));
  res.write(ev("response.completed", { response: result("completed", [item], usage) }));
  res.end();
}
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(JSON.stringify({ port: server.address().port }) + "\\n"));
`;

/**
 * A bare proxy: the floor of any gateway on this machine. node:http in, the body parsed and
 * written again (a gateway must read the model and rewrite the body), forwarded over undici's
 * keep-alive pool to the upstream, the answer piped back. No auth, no accounting, no logging.
 * Gatehouse against it shows what Gatehouse's own work costs beyond the extra HTTP hop.
 */
export const PROXY_JS = `
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
export const LOAD_JS = `
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

export interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Run before each measurement of this target (e.g. enable or disable destinations). */
  before?: () => Promise<void>;
}

export interface OpenRun {
  ttfb: number[];
  total: number[];
  overhead: number[];
}

/** Fixed rate (open loop): `count` requests at `rate`/s, each at its scheduled time. */
export async function openLoop(t: Target, rate: number, count: number): Promise<OpenRun> {
  await t.before?.();
  const { first } = childJson(LOAD_JS, [JSON.stringify({ mode: "open", ...t, rate, count })]);
  const r = (await first) as
    { results: { ttfb: number; total: number; overhead: number | null }[] } | { error: string };
  if ("error" in r) throw new Error(`${t.name}: ${r.error}`);
  return {
    ttfb: r.results.map((x) => x.ttfb),
    total: r.results.map((x) => x.total),
    overhead: r.results.flatMap((x) => (x.overhead === null ? [] : [x.overhead])),
  };
}

/**
 * Saturation (closed loop, `connections` lanes for `ms`): requests/s, and the CPU time `pid` (the
 * server, when given) spent per request meanwhile, in ms. CPU per request hardly depends on what
 * else runs on the machine, unlike requests/s.
 */
export async function closedLoop(
  t: Target,
  pid: number | null,
  connections: number,
  ms: number,
): Promise<[number, number | null]> {
  await t.before?.();
  const cpu0 = pid === null ? null : cpuMsOf(pid);
  const { first } = childJson(LOAD_JS, [JSON.stringify({ mode: "closed", ...t, connections, ms })]);
  const r = (await first) as { rps: number } | { error: string };
  if ("error" in r) throw new Error(`${t.name}: ${r.error}`);
  const cpu1 = pid === null ? null : cpuMsOf(pid);
  const perRequest = cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / ((r.rps * ms) / 1000);
  return [r.rps, perRequest];
}

/**
 * Whether wrk (Debian's `wrk` package) is on the PATH. A Node load process caps what it can drive
 * (on a 2-core machine it measured the direct upstream at well under half of what wrk measures),
 * so saturation is driven by wrk where it is installed.
 */
export function wrkAvailable(): boolean {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
    return true;
  } catch (err) {
    // wrk --version exits 1 after printing its banner; only a missing binary is ENOENT.
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** wrk's Lua script for a target: its method, headers and body; any non-2xx answer is counted. */
function wrkScript(t: Target): string {
  const headers = Object.entries(t.headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join("\n");
  return `wrk.method = "POST"
wrk.body = ${JSON.stringify(t.body)}
${headers}
local bad = 0
response = function(status, headers, body)
  if status < 200 or status > 299 then bad = bad + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("GATEHOUSE_BENCH %d %d %d\\n", summary.requests, summary.duration, bad))
end
`;
}

/**
 * Saturation driven by wrk (one thread, `connections` keep-alive connections, for `ms`), with the
 * same answer as closedLoop: requests/s and the server's CPU per request. Any non-2xx fails the run.
 */
export async function closedLoopWrk(
  t: Target,
  pid: number | null,
  connections: number,
  ms: number,
): Promise<[number, number | null]> {
  await t.before?.();
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-wrk-"));
  try {
    const script = join(dir, "post.lua");
    writeFileSync(script, wrkScript(t));
    const cpu0 = pid === null ? null : cpuMsOf(pid);
    const out = await new Promise<string>((done, fail) => {
      const child = spawn("wrk", [
        "-t1",
        `-c${connections}`,
        `-d${Math.max(1, Math.round(ms / 1000))}s`,
        "-s",
        script,
        t.url,
      ]);
      let text = "";
      child.stdout.on("data", (b: Buffer) => (text += b.toString("utf8")));
      child.stderr.on("data", (b: Buffer) => (text += b.toString("utf8")));
      child.on("error", fail);
      child.on("exit", (code) =>
        code === 0 ? done(text) : fail(new Error(`${t.name}: wrk exited ${code}: ${text}`)),
      );
    });
    const cpu1 = pid === null ? null : cpuMsOf(pid);
    const m = /GATEHOUSE_BENCH (\d+) (\d+) (\d+)/.exec(out);
    if (!m) throw new Error(`${t.name}: wrk printed no summary: ${out}`);
    const [requests, durationUs, bad] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (bad > 0) throw new Error(`${t.name}: ${bad} of ${requests} answers were not 2xx`);
    const rps = requests / (durationUs / 1e6);
    const perRequest = cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / requests;
    return [rps, perRequest];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench's management key (GATEHOUSE_BOOTSTRAP_KEY of the server). */
export const BENCH_MANAGEMENT_KEY = `sk-gh-v1-${"be".repeat(32)}`;

/** The chat request every target sends (`model` differs: the upstream's name or Gatehouse's). */
export function chatBody(model: string, stream: boolean): string {
  const messages = [{ role: "user", content: "Say hello to the benchmark." }];
  return JSON.stringify({ model, messages, max_tokens: 16, stream });
}

/**
 * Gatehouse's environment for the bench, in `dir`: a providers file routing `bench/tiny` to the
 * upstream on `upstreamPort`, the bootstrap management key, request logs at info level, rate
 * limits out of the way, and `recording` (GATEHOUSE_RECORDING).
 */
export function benchServerEnv(dir: string, upstreamPort: number, recording: string): Record<string, string> {
  const providersFile = join(dir, "providers.json");
  writeFileSync(
    providersFile,
    JSON.stringify({
      providers: [
        {
          slug: "bench",
          kind: "openai-compatible",
          base_url: `http://127.0.0.1:${upstreamPort}/v1`,
          api_key: "bench-upstream",
        },
        {
          slug: "bench-anthropic",
          kind: "anthropic",
          base_url: `http://127.0.0.1:${upstreamPort}`,
          api_key: "bench-upstream",
        },
        {
          slug: "bench-responses",
          kind: "openai-compatible",
          base_url: `http://127.0.0.1:${upstreamPort}/v1`,
          api_key: "bench-upstream",
          responses: true,
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
        {
          id: "bench/tiny-claude",
          provider: "bench-anthropic",
          upstream_model: "tiny",
          prompt_price: 0.000001,
          completion_price: 0.000002,
          context_length: 8192,
          max_completion_tokens: 1024,
        },
        {
          id: "bench/tiny-responses",
          provider: "bench-responses",
          upstream_model: "tiny",
          prompt_price: 0.000001,
          completion_price: 0.000002,
          context_length: 8192,
          max_completion_tokens: 1024,
        },
      ],
    }),
  );
  const big = "1000000";
  return {
    GATEHOUSE_DATA_DIR: dir,
    GATEHOUSE_BOOTSTRAP_KEY: BENCH_MANAGEMENT_KEY,
    GATEHOUSE_PROVIDERS_FILE: providersFile,
    // The bench's Broadcast receivers listen on loopback: allowed as an operator allows a collector.
    BROADCAST_ALLOWED_PRIVATE_HOSTS: "127.0.0.1/8,::1",
    LOG_LEVEL: "info",
    RATE_LIMIT_MANAGEMENT_MAX: big,
    RATE_LIMIT_INFERENCE_MAX: big,
    GATEHOUSE_RECORDING: recording,
  };
}

/** An ordinary key with a limit, and a monthly budget on its workspace: returns the key. */
export async function createBenchKey(base: string): Promise<string> {
  const created = (await call(`${base}/keys`, "POST", BENCH_MANAGEMENT_KEY, {
    name: "bench key",
    limit: 100_000,
  })) as { key: string };
  await call(`${base}/workspaces/default/budgets/monthly`, "PUT", BENCH_MANAGEMENT_KEY, {
    limit_usd: 100_000,
  });
  return created.key;
}

/** A JSON POST to `path` on a local server's `port`, without credentials (an upstream, a bench server). */
export function localTarget(port: number, path: string, body: string, name: string = path): Target {
  return {
    name,
    url: `http://127.0.0.1:${port}${path}`,
    headers: { "content-type": "application/json" },
    body,
  };
}

/** A chat-completions target on a Gatehouse server (`base` ends in /api/v1). */
export function gatehouseTarget(name: string, base: string, key: string, stream: boolean): Target {
  return {
    name,
    url: `${base}/chat/completions`,
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: chatBody("bench/tiny", stream),
  };
}
