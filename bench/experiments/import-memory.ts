/**
 * Memory of `gatehouse import`: streams N generated records (default 1,000,000) into the real CLI
 * (`gatehouse import -`, SQLite + DuckDB in a temporary data directory) through its standard
 * input, and samples the child's resident set (VmRSS, VmHWM from /proc) while it runs. The import
 * must stay flat: bounded batches and backpressure, whatever N is.
 *
 *   npx tsx bench/experiments/import-memory.ts [N] [--batch 1000] [--keep]
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { systemClock } from "../../src/lib/clock.js";
import { hashKey } from "../../src/lib/ids.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";

const args = process.argv.slice(2);
const n = Number(args.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
const batchAt = args.indexOf("--batch");
const batch = batchAt >= 0 ? (args[batchAt + 1] ?? "1000") : "1000";
const keep = args.includes("--keep");

const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "gh-import-mem-"));
const store = await openSqliteStore(join(dir, "gatehouse.sqlite"));
const org = await createOrganization(store, systemClock, "Bench");
await store.close();
const keyHash = hashKey(org.managementKey);

const child = spawn(
  process.execPath,
  ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "import", "-", "--batch", batch],
  {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", GATEHOUSE_DATA_DIR: dir },
    stdio: ["pipe", "inherit", "inherit"],
  },
);

const kib = (field: string): number => {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(
      readFileSync(`/proc/${child.pid}/status`, "utf8"),
    );
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
};
let peak = 0;
const samples: number[] = [];
let ticks = 0;
const sampler = setInterval(() => {
  const hwm = kib("VmHWM");
  if (hwm > peak) peak = hwm;
  const rss = kib("VmRSS");
  samples.push(rss);
  // A trace every 10 s: resident memory must not grow with the records imported.
  if (++ticks % 40 === 0)
    process.stderr.write(`rss ${(rss / 1024).toFixed(0)} MiB, peak ${(peak / 1024).toFixed(0)} MiB\n`);
}, 250);

const started = Date.now();
const DAY = 86_400_000;
const start = Date.now() - 60 * DAY;
const step = (60 * DAY) / n;
const models = [
  "openai/gpt-4o",
  "anthropic/claude-sonnet-4",
  "google/gemini-2.5-pro",
  "deepseek/deepseek-chat",
];
for (let i = 0; i < n; i++) {
  const line =
    JSON.stringify({
      id: `bench-${i}`,
      created_at: new Date(start + Math.floor(i * step)).toISOString(),
      api_key_hash: keyHash,
      model: models[i % models.length],
      provider: "Provider",
      user_id: `user_${i % 50}`,
      app_id: 1 + (i % 5),
      country: "US",
      finish_reason: "stop",
      tokens_prompt: 500 + (i % 3000),
      tokens_completion: 100 + (i % 700),
      usage: 0.000123 * (1 + (i % 10)),
      latency_ms: 200 + (i % 900),
      generation_time_ms: 1500 + (i % 3000),
      classifications:
        i % 3 === 0
          ? [
              {
                classifier_id: "11111111-1111-4111-8111-111111111111",
                dimension_name: "topic",
                value: "coding",
              },
            ]
          : undefined,
    }) + "\n";
  if (!child.stdin.write(line)) await once(child.stdin, "drain");
}
child.stdin.end();
const [code] = (await once(child, "exit")) as [number | null];
clearInterval(sampler);
const seconds = (Date.now() - started) / 1000;
const median = [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? 0;
process.stdout.write(
  [
    "",
    `records:        ${n.toLocaleString("en-US")} (batch ${batch})`,
    `exit code:      ${code}`,
    `time:           ${seconds.toFixed(1)} s (${Math.round(n / seconds).toLocaleString("en-US")} records/s)`,
    `peak RSS:       ${(peak / 1024).toFixed(0)} MiB (VmHWM)`,
    `median RSS:     ${(median / 1024).toFixed(0)} MiB`,
    `data dir:       ${dir}${keep ? "" : " (removed)"}`,
    "",
  ].join("\n"),
);
if (!keep) rmSync(dir, { recursive: true, force: true });
process.exitCode = code === 0 ? 0 : 1;
