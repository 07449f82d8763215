/**
 * What guardrails cost the request path (issue 38's benchmark): chat completions through one
 * Gatehouse, same run, interleaved rounds, from a key of a workspace without guardrails (the
 * baseline) and from a key of a workspace whose default guardrail has an allowlist, a daily
 * budget and three content filters (email redacted, credit cards blocked, a custom pattern
 * flagged). Saturation by wrk (keep-alive connections), JSON and streamed; Gatehouse's CPU per
 * request and its growth over the baseline (the target: at most 10 %). The prompt is ~1 KB of
 * prose without personal data, so the filters scan and find nothing: the cost every request pays.
 * Default settings (durable recording, info logging).
 *
 *   npm run bench:guardrails -- [--rounds 3] [--seconds 3] [--connections 32] [--warm-seconds 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { numberOption } from "./lib/args.js";
import { childJson } from "./lib/child-process.js";
import {
  BENCH_MANAGEMENT_KEY,
  benchServerEnv,
  closedLoop,
  closedLoopWrk,
  UPSTREAM_JS,
  wrkAvailable,
  type Target,
} from "./lib/gateway-load.js";
import { startBenchServer } from "./lib/query-server.js";
import { median } from "./lib/stats.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const ROUNDS = opt("rounds", 3);
const SECONDS = opt("seconds", 3);
const CONNECTIONS = opt("connections", 32);
const WARM_SECONDS = opt("warm-seconds", 5);
const WRK = wrkAvailable();

const PROMPT =
  "Summarise the following notes for the weekly engineering review. The team shipped the new " +
  "ingestion pipeline on Tuesday after two days of load testing; throughput held steady at the " +
  "expected level and the error rate stayed below the alert threshold. The migration of the " +
  "reporting jobs is half done: the daily jobs run on the new scheduler, the monthly ones still " +
  "run on the old cluster and will move next sprint. Two incidents were opened: a slow query on " +
  "the billing dashboard, fixed by an index, and a flaky integration test, quarantined until its " +
  "owner is back. Hiring: one offer accepted, two interviews scheduled. Risks: the vendor contract " +
  "renewal is due at the end of the month and the capacity plan for the holiday peak is not yet " +
  "reviewed. Please keep the summary short and list the action items with their owners.";

async function call(url: string, method: string, body?: unknown): Promise<any> {
  const r = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${BENCH_MANAGEMENT_KEY}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${text}`);
  return JSON.parse(text);
}

/** A workspace with a key limit and a monthly budget (as bench:gateway has), and its key. */
async function workspaceKey(base: string, slug: string): Promise<{ key: string; guardrailId: string }> {
  const ws = await call(`${base}/workspaces`, "POST", { name: slug, slug });
  await call(`${base}/workspaces/${slug}/budgets/monthly`, "PUT", { limit_usd: 100_000 });
  const k = await call(`${base}/keys`, "POST", { name: slug, workspace_id: ws.data.id, limit: 100_000 });
  return { key: k.key as string, guardrailId: ws.data.default_guardrail_id as string };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-guardrails-"));
  const upstream = childJson(UPSTREAM_JS);
  let server: Awaited<ReturnType<typeof startBenchServer>> | null = null;
  try {
    const { port } = (await upstream.first) as { port: number };
    server = await startBenchServer(benchServerEnv(dir, port, "durable"), []);
    const plain = await workspaceKey(server.base, "plain");
    const guarded = await workspaceKey(server.base, "guarded");
    await call(`${server.base}/guardrails/${guarded.guardrailId}`, "PATCH", {
      allowed_models: ["bench/tiny"],
      limit_usd: 100_000,
      reset_interval: "daily",
      content_filter_builtins: [
        { slug: "email", action: "redact" },
        { slug: "credit-card", action: "block" },
      ],
      content_filters: [{ pattern: "PROJ-[0-9]{4}", action: "flag", label: "[PROJECT]" }],
    });
    const pid = server.pid;
    const closed = (t: Target, ms: number) =>
      WRK ? closedLoopWrk(t, pid, CONNECTIONS, ms) : closedLoop(t, pid, CONNECTIONS, ms);
    const target = (key: string, stream: boolean): Target => ({
      name: "chat",
      url: `${server!.base}/chat/completions`,
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        model: "bench/tiny",
        messages: [{ role: "user", content: PROMPT }],
        max_tokens: 16,
        stream,
      }),
    });
    const targets: { name: string; t: Target }[] = [];
    for (const stream of [false, true]) {
      const kind = stream ? "stream" : "json";
      targets.push({ name: `without ${kind}`, t: target(plain.key, stream) });
      targets.push({ name: `with ${kind}`, t: target(guarded.key, stream) });
    }
    for (const x of targets) await closed(x.t, WARM_SECONDS * 1000);
    const rps = new Map<string, number[]>(targets.map((x) => [x.name, []]));
    const cpu = new Map<string, number[]>(targets.map((x) => [x.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const x of [...targets].sort(() => Math.random() - 0.5)) {
        const [n, perRequest] = await closed(x.t, SECONDS * 1000);
        rps.get(x.name)!.push(n);
        if (perRequest !== null) cpu.get(x.name)!.push(perRequest);
      }
      process.stderr.write(`round ${r + 1}/${ROUNDS} done\n`);
    }
    console.log(
      `\n${ROUNDS} rounds, saturation by ${WRK ? "wrk" : "a Node load process"} at ${CONNECTIONS} connections, ${SECONDS} s each; medians. GATEHOUSE_RECORDING=durable.\n`,
    );
    console.log("| mode | guardrail | requests/s | CPU per request | CPU growth (target ≤ 10 %) |");
    console.log("| --- | --- | --- | --- | --- |");
    for (const kind of ["json", "stream"]) {
      const base = median(cpu.get(`without ${kind}`)!);
      for (const w of ["without", "with"]) {
        const name = `${w} ${kind}`;
        const c = median(cpu.get(name)!);
        const growth = w === "with" ? `${((100 * (c - base)) / base).toFixed(1)} %` : "(baseline)";
        console.log(
          `| ${kind} | ${w} | ${median(rps.get(name)!).toFixed(0)} | ${c.toFixed(3)} ms | ${growth} |`,
        );
      }
    }
  } finally {
    await server?.stop();
    upstream.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
