/**
 * One upstream exchange's CPU cost, the gateway's way against undici's `request()`, in one run:
 * both send the bench's chat request to the same local upstream (bench/lib/gateway-load.ts, in a
 * child process) over the same kind of keep-alive pool and read the whole JSON answer, 8 at a
 * time; this process's CPU time per exchange is compared, in alternating rounds.
 *
 *   baseline  undici's `request()` with an AbortController, a caller's signal listened to and a
 *             first-byte timer, as src/gateway/providers/upstream-http.ts did before it went to
 *             the dispatcher (its body a Node stream);
 *   gateway   `sendUpstream` + `readWholeBody` from src/gateway/providers/upstream-http.ts.
 *
 *   npx tsx bench/experiments/upstream-exchange.ts [--rounds 5] [--exchanges 5000]
 */
import { Agent, request } from "undici";
import { numberOption } from "../lib/args.js";
import { childJson } from "../lib/child-process.js";
import { chatBody, UPSTREAM_JS } from "../lib/gateway-load.js";
import { alternate } from "../lib/alternate.js";
import { median } from "../lib/stats.js";
import { createUpstreamPool, readWholeBody, sendUpstream } from "../../src/gateway/providers/upstream-http.js";

const opt = numberOption(process.argv.slice(2));
const ROUNDS = opt("rounds", 5);
const EXCHANGES = opt("exchanges", 5000);
const LANES = 8;

const upstream = childJson(UPSTREAM_JS);
const { port } = (await upstream.first) as { port: number };
const url = `http://127.0.0.1:${port}/v1/chat/completions`;
const headers = { "content-type": "application/json", authorization: "Bearer bench-upstream" };
const body = chatBody("tiny", false);
const TIMEOUT_MS = 60_000;

const agent = new Agent({
  connections: 128,
  keepAliveTimeout: 30_000,
  headersTimeout: 0,
  bodyTimeout: TIMEOUT_MS,
});
async function viaRequest(caller: AbortSignal): Promise<string> {
  const ac = new AbortController();
  const onAbort = (): void => ac.abort(caller.reason);
  caller.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => ac.abort(new Error("first-byte timeout")), TIMEOUT_MS);
  try {
    const res = await request(url, { dispatcher: agent, method: "POST", headers, body, signal: ac.signal });
    clearTimeout(timer);
    return await res.body.text();
  } finally {
    clearTimeout(timer);
    caller.removeEventListener("abort", onAbort);
  }
}

const pool = createUpstreamPool({ idleTimeoutMs: TIMEOUT_MS });
const viaGateway = async (caller: AbortSignal): Promise<string> =>
  readWholeBody(await sendUpstream(pool, { url, headers, body, firstByteTimeoutMs: TIMEOUT_MS }, caller));

/** CPU time of this process per exchange, in µs. */
async function measure(exchange: (caller: AbortSignal) => Promise<string>): Promise<number> {
  let left = EXCHANGES;
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (left-- > 0) {
        const text = await exchange(new AbortController().signal);
        if (!text.includes("bench")) throw new Error(`unexpected answer: ${text.slice(0, 200)}`);
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / EXCHANGES;
}

try {
  // The unmeasured first run of each warms the JIT and the connections.
  const [base, gw] = await alternate(
    ROUNDS,
    () => measure(viaRequest),
    () => measure(viaGateway),
  );
  console.log(`\n${ROUNDS} rounds of ${EXCHANGES} exchanges, ${LANES} at a time; CPU time of this process\n`);
  console.log("| way | CPU per exchange (median) | rounds |");
  console.log("| --- | --- | --- |");
  console.log(
    `| undici request() (baseline) | ${median(base).toFixed(1)} µs | ${base.map((x) => x.toFixed(0)).join(", ")} |`,
  );
  console.log(
    `| sendUpstream (gateway) | ${median(gw).toFixed(1)} µs | ${gw.map((x) => x.toFixed(0)).join(", ")} |`,
  );
  console.log(
    `\ngateway / baseline: ${(median(gw.map((g, i) => g / base[i]!)) * 100).toFixed(1)} % (median of per-round ratios)`,
  );
} finally {
  upstream.child.kill();
  await agent.close();
  await pool.close();
}
