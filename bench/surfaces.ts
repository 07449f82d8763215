/**
 * The API surfaces against chat completions, same server, same run (issue 37's benchmark): the
 * Responses and Anthropic Messages APIs translated to an OpenAI-compatible provider, Responses
 * forwarded natively to a provider that declares `responses: true`, Messages forwarded natively to
 * an Anthropic provider, and chat completions translated to that Anthropic provider, each JSON and
 * streamed. For each: saturation requests/s (wrk, keep-alive connections)
 * as a share of the upstream called directly in the same shape, and Gatehouse's CPU per request;
 * a translation's cost is its CPU per request minus the native path's on the same provider
 * (Responses translated against Responses forwarded natively; Messages on the OpenAI-compatible
 * provider against chat completions there; chat completions on the Anthropic provider against
 * Messages there). Interleaved rounds after a
 * warm-up, medians reported. Default settings (durable recording, info logging). Then, because a
 * saturation run's noise on this machine is of the order of the 0.1 ms it checks, the translations'
 * own functions timed in process for the same request and answer (bench/lib/translation-cost.ts).
 *
 *   npm run bench:surfaces -- [--rounds 3] [--seconds 3] [--connections 32] [--warm-seconds 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { numberOption } from "./lib/args.js";
import { childJson } from "./lib/child-process.js";
import {
  benchServerEnv,
  closedLoop,
  closedLoopWrk,
  createBenchKey,
  UPSTREAM_JS,
  wrkAvailable,
  type Target,
} from "./lib/gateway-load.js";
import { startBenchServer } from "./lib/query-server.js";
import { median } from "./lib/stats.js";
import { translationCost } from "./lib/translation-cost.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const ROUNDS = opt("rounds", 3);
const SECONDS = opt("seconds", 3);
const CONNECTIONS = opt("connections", 32);
const WARM_SECONDS = opt("warm-seconds", 5);
const WRK = wrkAvailable();

const say = "Say hello to the benchmark.";
const bodies = {
  chat: (model: string, stream: boolean) =>
    JSON.stringify({ model, messages: [{ role: "user", content: say }], max_tokens: 16, stream }),
  responses: (model: string, stream: boolean) =>
    JSON.stringify({ model, input: say, max_output_tokens: 16, stream, store: false }),
  messages: (model: string, stream: boolean) =>
    JSON.stringify({ model, messages: [{ role: "user", content: say }], max_tokens: 16, stream }),
};

interface Variant {
  name: string;
  /** The direct target it is a share of. */
  direct: string;
  /** The native path on the same provider (for the translation's cost), if this is a translation. */
  native?: string;
  target: (base: string, key: string, stream: boolean) => Target;
}

const through =
  (path: string, body: (stream: boolean) => string) =>
  (base: string, key: string, stream: boolean): Target => ({
    name: path,
    url: `${base}${path}`,
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: body(stream),
  });

const VARIANTS: Variant[] = [
  {
    name: "chat → openai (native)",
    direct: "openai",
    target: through("/chat/completions", (s) => bodies.chat("bench/tiny", s)),
  },
  {
    name: "responses → openai (native)",
    direct: "openai-responses",
    target: through("/responses", (s) => bodies.responses("bench/tiny-responses", s)),
  },
  {
    name: "responses → openai (translated)",
    direct: "openai",
    native: "responses → openai (native)",
    target: through("/responses", (s) => bodies.responses("bench/tiny", s)),
  },
  {
    name: "messages → openai (translated)",
    direct: "openai",
    native: "chat → openai (native)",
    target: through("/messages", (s) => bodies.messages("bench/tiny", s)),
  },
  {
    name: "messages → anthropic (native)",
    direct: "anthropic",
    target: through("/messages", (s) => bodies.messages("bench/tiny-claude", s)),
  },
  {
    name: "chat → anthropic (translated)",
    direct: "anthropic",
    native: "messages → anthropic (native)",
    target: through("/chat/completions", (s) => bodies.chat("bench/tiny-claude", s)),
  },
];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-surfaces-"));
  const upstream = childJson(UPSTREAM_JS);
  let server: Awaited<ReturnType<typeof startBenchServer>> | null = null;
  try {
    const { port } = (await upstream.first) as { port: number };
    server = await startBenchServer(benchServerEnv(dir, port, "durable"), []);
    const key = await createBenchKey(server.base);
    const pid = server.pid;
    const closed = (t: Target, p: number | null, ms: number) =>
      WRK ? closedLoopWrk(t, p, CONNECTIONS, ms) : closedLoop(t, p, CONNECTIONS, ms);
    const targets: { name: string; t: Target; server: boolean }[] = [];
    for (const stream of [false, true]) {
      const kind = stream ? "stream" : "json";
      const up = (path: string, body: string) => ({
        name: path,
        url: `http://127.0.0.1:${port}${path}`,
        headers: { "content-type": "application/json", authorization: "Bearer bench-upstream" },
        body,
      });
      targets.push({
        name: `direct openai ${kind}`,
        t: up("/v1/chat/completions", bodies.chat("tiny", stream)),
        server: false,
      });
      targets.push({
        name: `direct anthropic ${kind}`,
        t: up("/v1/messages", bodies.messages("tiny", stream)),
        server: false,
      });
      targets.push({
        name: `direct openai-responses ${kind}`,
        t: up("/v1/responses", bodies.responses("tiny", stream)),
        server: false,
      });
      for (const v of VARIANTS)
        targets.push({ name: `${v.name} ${kind}`, t: v.target(server.base, key, stream), server: true });
    }
    for (const x of targets) await closed(x.t, null, x.server ? WARM_SECONDS * 1000 : 1000);
    const rps = new Map<string, number[]>(targets.map((x) => [x.name, []]));
    const cpu = new Map<string, number[]>(targets.map((x) => [x.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const x of [...targets].sort(() => Math.random() - 0.5)) {
        const [n, perRequest] = await closed(x.t, x.server ? pid : null, SECONDS * 1000);
        rps.get(x.name)!.push(n);
        if (perRequest !== null) cpu.get(x.name)!.push(perRequest);
      }
      process.stderr.write(`round ${r + 1}/${ROUNDS} done\n`);
    }
    console.log(
      `\n${ROUNDS} rounds, saturation by ${WRK ? "wrk" : "a Node load process"} at ${CONNECTIONS} connections, ${SECONDS} s each; medians. GATEHOUSE_RECORDING=durable.\n`,
    );
    console.log(
      "| surface → provider | mode | requests/s (share of direct) | CPU per request | translation's extra CPU |",
    );
    console.log("| --- | --- | --- | --- | --- |");
    for (const kind of ["json", "stream"]) {
      for (const v of VARIANTS) {
        const name = `${v.name} ${kind}`;
        const direct = median(rps.get(`direct ${v.direct} ${kind}`)!);
        const n = median(rps.get(name)!);
        const c = median(cpu.get(name)!);
        const extra = v.native
          ? `${(c - median(cpu.get(`${v.native} ${kind}`)!)).toFixed(3)} ms`
          : "(native)";
        console.log(
          `| ${v.name} | ${kind} | ${n.toFixed(0)} (${((100 * n) / direct).toFixed(1)} % of ${Math.round(direct)}) | ${c.toFixed(3)} ms | ${extra} |`,
        );
      }
    }
    console.log(
      "\nIn process, per request (request translated, answer translated and serialised; median of 7 × 20,000):\n",
    );
    console.log("| translation | json | stream |");
    console.log("| --- | --- | --- |");
    for (const t of translationCost())
      console.log(`| ${t.name} | ${t.json.toFixed(1)} µs | ${t.stream.toFixed(1)} µs |`);
  } finally {
    await server?.stop();
    upstream.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
