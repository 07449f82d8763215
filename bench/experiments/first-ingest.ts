/**
 * Latency of the first ingest after a start: src/main.ts on a fresh data directory (embedded
 * stores, the default worker pool), one batch of --records records posted as soon as it listens,
 * then a second batch for comparison. --runs fresh starts.
 *
 *   npx tsx bench/experiments/first-ingest.ts [--runs 3] [--records 1000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { numberOption } from "../lib/args.js";
import { startBenchServer } from "../lib/query-server.js";

const opt = numberOption(process.argv.slice(2));
const RUNS = opt("runs", 3);
const RECORDS = opt("records", 1000);
const key = `sk-gh-v1-${"f1".repeat(32)}`;
const hash = createHash("sha256").update(key).digest("hex");

const batch = (tag: string) =>
  JSON.stringify({
    generations: Array.from({ length: RECORDS }, (_, i) => ({
      id: `${tag}-${i}`,
      created_at: new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, "Z"),
      api_key_hash: hash,
      model: "openai/gpt-4o",
      provider: "OpenAI",
      tokens_prompt: 100,
      tokens_completion: 20,
      usage: 0.001,
      latency_ms: 100,
    })),
  });

const post = async (base: string, body: string): Promise<number> => {
  const t = performance.now();
  const res = await fetch(`${base}/activity/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${res.status} ${text.slice(0, 300)}`);
  return performance.now() - t;
};

for (let r = 0; r < RUNS; r++) {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-first-ingest-"));
  const server = await startBenchServer({
    GATEHOUSE_DATA_DIR: dir,
    GATEHOUSE_BOOTSTRAP_KEY: key,
    LOG_LEVEL: "info",
  });
  try {
    const first = await post(server.base, batch(`a${r}`));
    const second = await post(server.base, batch(`b${r}`));
    console.log(`run ${r + 1}: first ingest ${first.toFixed(0)} ms, second ${second.toFixed(0)} ms`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
