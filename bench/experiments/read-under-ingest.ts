/**
 * Analytics reads while ingest runs flat out: how long a query waits (read-your-writes makes each
 * read wait for the batches accepted before it) when the server is also accepting ~50,000
 * records/s, with and without background compaction rewriting chunks meanwhile.
 *
 * src/main.ts in a child process on a temporary data directory (SQLite + DuckDB files). A warm-up
 * load, then the baseline: the same query on the idle server (--reads times). Then the measured
 * load (--batches of 1,000 records from --clients lanes, in a child process as in bench/ingest.ts)
 * with the query sent every --every ms from this process, one at a time over a keep-alive
 * connection. Prints the reads' latency under load against the idle baseline of the same run.
 *
 *   npx tsx bench/experiments/read-under-ingest.ts [--batches 600] [--clients 2] [--every 200] [--reads 20]
 *                                      [--chunk-rows 0]   (compaction chunk; 0 = compaction off)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { loadConfig } from "../../src/config/config.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { systemClock } from "../../src/lib/clock.js";
import { hashKey } from "../../src/lib/ids.js";
import { openRecordStore } from "../../src/stores/open-record-store.js";
import { numberOption } from "../lib/args.js";
import { prepareLoad, runLoad } from "../lib/http-clients.js";
import { keepAliveClient } from "../lib/http-post.js";
import { makeBodies } from "../lib/ingest-records.js";
import { startBenchServer } from "../lib/query-server.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const BATCHES = opt("batches", 600);
const CLIENTS = opt("clients", 2);
const EVERY_MS = opt("every", 200);
const READS = opt("reads", 20);
const CHUNK_ROWS = opt("chunk-rows", 0);
const WARMUP = 20;

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
const pct = (xs: readonly number[], p: number): number => {
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? NaN;
};
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

const dir = mkdtempSync(join(tmpdir(), "gh-bench-read-ingest-"));
try {
  const config = loadConfig({ GATEHOUSE_DATA_DIR: dir });
  const store = await openRecordStore(config);
  const org = await createOrganization(store, systemClock, "Bench");
  await store.close();
  const server = await startBenchServer({
    GATEHOUSE_DATA_DIR: dir,
    ANALYTICS_CACHE_TTL_MS: "0",
    RATE_LIMIT_ANALYTICS_MAX: "1000000",
    RATE_LIMIT_MANAGEMENT_MAX: "1000000",
    // Compaction as the server runs it, with every row sealed at once so that chunks are rewritten
    // during the load.
    ACTIVITY_COMPACTION_CHUNK_ROWS: String(CHUNK_ROWS),
    ACTIVITY_COMPACTION_SEAL_MS: "0",
    ACTIVITY_COMPACTION_INTERVAL_MS: "1000",
  });
  const report: string[] = [];
  try {
    const client = keepAliveClient(server.base);
    const headers = { authorization: `Bearer ${org.managementKey}`, "content-type": "application/json" };
    const now = Date.now();
    const query = JSON.stringify({
      metrics: ["request_count", "total_usage", "avg_latency"],
      dimensions: ["model"],
      granularity: "hour",
      time_range: { start: iso(now - 2 * 86_400_000), end: iso(now + 3_600_000) },
    });
    const read = async (): Promise<number> => {
      const r = await client.post("/analytics/query", headers, query);
      if (r.status !== 200) throw new Error(`analytics query: ${r.status} ${r.text.slice(0, 300)}`);
      return r.ms;
    };
    const space = {
      keyHashes: [hashKey(org.managementKey)],
      idPrefix: `r${now.toString(36)}`,
      startMs: now - 3_000_000,
    };
    const url = `${server.base}/activity/generations`;
    await runLoad({
      url,
      key: org.managementKey,
      bodies: makeBodies(space, WARMUP, 1000, 0),
      clients: CLIENTS,
    });

    // Baseline: the idle server.
    const idle: number[] = [];
    for (let i = 0; i < READS + 3; i++) {
      const ms = await read();
      if (i >= 3) idle.push(ms);
    }

    // Under load.
    const load = await prepareLoad({
      url,
      key: org.managementKey,
      bodies: makeBodies(space, BATCHES, 1000, WARMUP),
      clients: CLIENTS,
    });
    let loading = true;
    const busy: number[] = [];
    const reads = (async () => {
      while (loading) {
        busy.push(await read());
        await new Promise((done) => setTimeout(done, EVERY_MS));
      }
    })();
    const result = await load.go();
    loading = false;
    await reads;
    // Every accepted record counted once, compaction or not.
    const total = await client.post(
      "/analytics/query",
      headers,
      JSON.stringify({ ...JSON.parse(query), dimensions: [], granularity: undefined }),
    );
    const counted = (
      JSON.parse(total.text) as { data: { data: { request_count: number }[] } }
    ).data.data.reduce((n, r) => n + r.request_count, 0);
    client.close();
    if (counted !== (WARMUP + BATCHES) * 1000) {
      throw new Error(`analytics counts ${counted} records, ${(WARMUP + BATCHES) * 1000} were accepted`);
    }

    const idleP50 = pct(idle, 0.5);
    const line = (label: string, xs: readonly number[]) =>
      `  ${label.padEnd(34)} n ${String(xs.length).padStart(3)}   p50 ${pct(xs, 0.5).toFixed(1).padStart(8)} ms` +
      `   p90 ${pct(xs, 0.9).toFixed(1).padStart(8)} ms   max ${pct(xs, 1).toFixed(1).padStart(8)} ms`;
    report.push(
      ...[
        "",
        `reads under ingest: ${BATCHES} batches of 1,000 from ${CLIENTS} clients, a read every ${EVERY_MS} ms, ` +
          `compaction ${CHUNK_ROWS > 0 ? `chunks of ${CHUNK_ROWS.toLocaleString("en-US")} rows` : "off"}`,
        `  ingest ${Math.round((BATCHES * 1000) / (result.ms / 1000)).toLocaleString("en-US")} records/s, ` +
          `batch p50 ${pct(result.latencies, 0.5).toFixed(0)} ms, max ${pct(result.latencies, 1).toFixed(0)} ms`,
        line("analytics query, idle server", idle),
        line("analytics query, during the load", busy),
        `  every accepted record counted once afterwards: ${counted.toLocaleString("en-US")}`,
        `RATIO under load / idle: p50 ${(pct(busy, 0.5) / idleP50).toFixed(1)}, p90 ${(pct(busy, 0.9) / idleP50).toFixed(1)}, ` +
          `max ${(pct(busy, 1) / idleP50).toFixed(1)}`,
      ],
    );
  } finally {
    await server.stop();
  }
  if (CHUNK_ROWS > 0) {
    // How far compaction got meanwhile (the server holds the file while it runs).
    const db = await DuckDBInstance.create(join(dir, "activity.duckdb"));
    const conn = await db.connect();
    const [row] = (
      await conn.runAndReadAll(
        `SELECT count(*) AS n FROM generations
         WHERE created_at < (SELECT max(sealed_before) FROM activity_compaction WHERE level = 1)`,
      )
    ).getRowObjectsJS();
    conn.closeSync();
    db.closeSync();
    report.push(
      `  below the compaction watermark at the end (rewritten sorted): ${Number(row?.n ?? 0).toLocaleString("en-US")} rows`,
    );
  }
  process.stdout.write(`${report.join("\n")}\n\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
