/**
 * Ingest throughput through the real HTTP endpoint (POST /api/v1/activity/generations).
 *
 * Starts the app as main.ts composes it (buildApp + listen on 127.0.0.1:0, SQLite record store and
 * DuckDB activity file in a temporary data directory), creates a few keys through the API, then
 * drives batches of realistic records from concurrent clients (a worker thread, fetch over
 * loopback) after a warm-up. Because the machine is shared and noisy, it also measures in the same
 * run a yardstick that this project's code cannot change (JSON.parse of the same bodies) and
 * prints the ratio HTTP ÷ yardstick, plus stage baselines and a per-stage breakdown.
 *
 *   npx tsx bench/ingest.ts [--batches 150] [--size 1000] [--clients 2] [--warmup 10] [--keep]
 *                           [--cpu-prof FILE]   (main-thread profile of the measured run)
 *   npm run bench:ingest
 */
import { PolicyCache } from "../src/domain/policy/policy-cache.js";
import { recordStoreLoader } from "../src/domain/policy/policy-loader.js";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { OutboxSignal } from "../src/broadcast/outbox/outbox-signal.js";
import { outboxSink } from "../src/broadcast/outbox/outbox-sink.js";
import { loadConfig } from "../src/config/config.js";
import { drainIngestBuffer } from "../src/domain/ingest/pipeline/ingest-buffer.js";
import { ingestGenerations } from "../src/domain/ingest/ingest-generations.js";
import { toRow, type KeyRef } from "../src/domain/ingest/records/normalise-batch.js";
import { recordsOf } from "../src/domain/ingest/records/read-body.js";
import { ingestPreparerFor } from "../src/domain/ingest/workers/prepare-pool.js";
import { parseRecords, Problems } from "../src/domain/ingest/records/validate-generations.js";
import { createOrganization } from "../src/domain/organizations/create-organization.js";
import { buildApp } from "../src/http/app.js";
import type { AppContext } from "../src/http/context.js";
import { systemClock } from "../src/lib/clock.js";
import { hashKey } from "../src/lib/ids.js";
import { SecretBox } from "../src/lib/secret-box.js";
import type { ActivityStore } from "../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../src/stores/duckdb/duckdb-store.js";
import { openActivityStore } from "../src/stores/open-activity-store.js";
import { openRecordStore } from "../src/stores/open-record-store.js";
import type { RecordStore } from "../src/stores/record-store.js";
import { openSqliteStore } from "../src/stores/sqlite/open-sqlite.js";
import { numberOption } from "./lib/args.js";
import { prepareLoad, runLoad } from "./lib/http-clients.js";
import { makeBodies, type RecordSpace } from "./lib/ingest-records.js";
import { median, quantile } from "./lib/stats.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const BATCHES = opt("batches", 150);
const SIZE = opt("size", 1000);
const CLIENTS = opt("clients", 2);
const WARMUP = opt("warmup", 10);
const keep = args.includes("--keep");
const profileAt = args.indexOf("--cpu-prof");
const profileFile = profileAt >= 0 ? (args[profileAt + 1] ?? "ingest.cpuprofile") : null;

/**
 * CPU time (ms) of this process's threads by thread name (Linux /proc; `node` is the main thread,
 * `WorkerThread`... the ingest workers, DuckDB's and V8's own threads carry their names). Empty
 * where /proc is missing.
 */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  let tasks: string[];
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return out;
  }
  for (const t of tasks) {
    try {
      const stat = readFileSync(`/proc/self/task/${t}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, 100 Hz ticks
      const key = `${name} #${t}`;
      out.set(key, (out.get(key) ?? 0) + ms);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** The busiest threads between two snapshots, CPU ms per batch (the main thread's id is the pid). */
function threadLines(a: Map<string, number>, b: Map<string, number>): string[] {
  const busy = [...b]
    .map(([k, ms]) => [k, ms - (a.get(k) ?? 0)] as const)
    .filter(([, ms]) => ms > 0)
    .sort((x, y) => y[1] - x[1]);
  return busy.slice(0, 10).map(([k, ms]) => {
    const label = k.endsWith(` #${process.pid}`) ? `${k} (main)` : k;
    return `  ${label.padEnd(44)} ${(ms / BATCHES).toFixed(2).padStart(8)} ms/batch`;
  });
}

const fmt = (n: number): string => Math.round(n).toLocaleString("en-US");

/** Stage timers: sums (ms) and counts, reset between phases. */
class Stages {
  private readonly sums = new Map<string, { ms: number; n: number }>();
  add(name: string, ms: number): void {
    const s = this.sums.get(name);
    if (s) {
      s.ms += ms;
      s.n += 1;
    } else this.sums.set(name, { ms, n: 1 });
  }
  reset(): void {
    this.sums.clear();
  }
  lines(): string[] {
    return [...this.sums].map(
      ([name, s]) => `  ${name.padEnd(44)} ${(s.ms / s.n).toFixed(2).padStart(8)} ms/batch (n=${s.n})`,
    );
  }
}
const stages = new Stages();

/** The record store with its transactions timed: queue wait, body, commit. */
function timedStore(store: RecordStore): RecordStore {
  return {
    ...store,
    db: store.db,
    caps: store.caps,
    transaction: async (fn) => {
      const called = performance.now();
      let entered = 0;
      let left = 0;
      const out = await store.transaction(async (trx) => {
        entered = performance.now();
        stages.add("record store: wait for the transaction", entered - called);
        try {
          return await fn(trx);
        } finally {
          left = performance.now();
          stages.add("record store: transaction body (incl. activity)", left - entered);
        }
      });
      stages.add("record store: commit", performance.now() - left);
      return out;
    },
  };
}

function timedActivity(activity: ActivityStore): ActivityStore {
  const ex = activity.exclusive;
  return {
    dialect: activity.dialect,
    query: (q, o) => activity.query(q, o),
    generationsForReplay: (p, o) => activity.generationsForReplay(p, o),
    insertFeedback: (rows) => activity.insertFeedback(rows),
    ping: () => activity.ping(),
    close: () => activity.close(),
    insert: async (rows, tags) => {
      const t = performance.now();
      try {
        await activity.insert(rows, tags);
      } finally {
        stages.add("activity store: insert (check + append + commit)", performance.now() - t);
      }
    },
    exclusive: ex && {
      owner: ex.owner,
      session: ex.session,
      logDir: ex.logDir,
      applied: () => ex.applied(),
      forget: (seqs) => ex.forget(seqs),
      beforeRead: (barrier) => ex.beforeRead(barrier),
      apply: async (batches, seqs) => {
        const t = performance.now();
        try {
          await ex.apply(batches, seqs);
        } finally {
          stages.add("activity store: apply (per flush; n = flushes)", performance.now() - t);
        }
      },
    },
  };
}

/** The yardstick: JSON.parse of the bodies (V8 only; no project code). Records/s, best of 3. */
function yardstick(bodies: readonly string[]): number {
  let best = 0;
  for (let round = 0; round < 3; round++) {
    const t = performance.now();
    let n = 0;
    for (const b of bodies) n += (JSON.parse(b) as { generations: unknown[] }).generations.length;
    best = Math.max(best, n / ((performance.now() - t) / 1000));
  }
  return best;
}

/** A CPU profile of this process's main thread (the server) around the measured run only. */
async function startProfile(): Promise<{ stop(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((done, fail) =>
      session.post(method, params ?? {}, (err, res) => (err ? fail(err) : done(res))),
    );
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 200 });
  await post("Profiler.start");
  return {
    stop: async (file) => {
      const { profile } = (await post("Profiler.stop")) as { profile: unknown };
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/** JSON.parse + the ingest validator (no stores). Records/s. */
function parseAndValidate(bodies: readonly string[]): number {
  const t = performance.now();
  let n = 0;
  for (const b of bodies) {
    const problems = new Problems();
    n += parseRecords(recordsOf(JSON.parse(b)), Date.now(), problems).length;
    if (problems.total > 0) throw new Error(problems.sorted()[0]);
  }
  return n / ((performance.now() - t) / 1000);
}

const dir = mkdtempSync(join(tmpdir(), "gh-bench-ingest-"));
const config = loadConfig({
  GATEHOUSE_DATA_DIR: dir,
  RATE_LIMIT_MANAGEMENT_MAX: "1000000",
  LOG_LEVEL: "warn",
  INGEST_WORKERS: process.env.INGEST_WORKERS,
});
const rawStore = await openRecordStore(config);
const rawActivity = await openActivityStore(config);
const org = await createOrganization(rawStore, systemClock, "Bench");
const preparer = ingestPreparerFor(config.ingestWorkers, rawActivity);
const outboxSignal = new OutboxSignal();
const ctx: AppContext = {
  config,
  accepted: outboxSink(outboxSignal),
  outboxSignal,
  store: timedStore(rawStore),
  activity: timedActivity(rawActivity),
  clock: systemClock,
  secretBox: new SecretBox(Buffer.alloc(32, 3)),
  redis: null,
  policy: new PolicyCache(recordStoreLoader(rawStore.db), { channel: null }),
  ...(preparer ? { preparer } : {}),
};
const app = await buildApp(ctx, { logger: false });
app.addHook("onRequest", async (req) => {
  (req as unknown as { t0: number }).t0 = performance.now();
});
app.addHook("preHandler", async (req) => {
  const r = req as unknown as { t0: number; t1: number };
  r.t1 = performance.now();
  if (req.url.endsWith("/activity/generations")) stages.add("http: receive body", r.t1 - r.t0);
});
app.addHook("onSend", async (req) => {
  const r = req as unknown as { t1: number; t2: number };
  r.t2 = performance.now();
  if (req.url.endsWith("/activity/generations"))
    stages.add("handler: ingestGenerations (all of it)", r.t2 - r.t1);
});
await app.listen({ host: "127.0.0.1", port: 0 });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/v1`;

// Keys with different workspaces' defaults and creators, like a real organization's.
const keyHashes = [hashKey(org.managementKey)];
for (let k = 0; k < 4; k++) {
  const res = await fetch(`${base}/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${org.managementKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `bench key ${k}`, creator_user_id: `user_${k}` }),
  });
  if (res.status !== 201) throw new Error(`key: ${res.status} ${await res.text()}`);
  keyHashes.push(((await res.json()) as { data: { hash: string } }).data.hash);
}

const space: RecordSpace = {
  keyHashes,
  idPrefix: `b${Date.now().toString(36)}`,
  startMs: Date.now() - 3_600_000,
};
const warmBodies = makeBodies(space, WARMUP, SIZE, 0);
const bodies = makeBodies(space, BATCHES, SIZE, WARMUP);
const records = BATCHES * SIZE;
const bodyBytes = bodies.reduce((s, b) => s + b.length, 0) / bodies.length;

// Baselines before.
yardstick(warmBodies);
const yard1 = yardstick(bodies);
parseAndValidate(warmBodies);
const pv = parseAndValidate(bodies);

// Warm-up, then the measured run.
const url = `${base}/activity/generations`;
await runLoad({ url, key: org.managementKey, bodies: warmBodies, clients: CLIENTS });
const prepared = await prepareLoad({ url, key: org.managementKey, bodies, clients: CLIENTS });
stages.reset();
const profiler = profileFile ? await startProfile() : null;
const threads0 = threadCpu();
const cpu0 = process.cpuUsage();
const elu0 = performance.eventLoopUtilization();
const load = await prepared.go();
// Accepted batches are written to DuckDB by the ingest buffer's flusher: the run ends when the
// last one is there, so the time and CPU to write what was still buffered count too.
const drain0 = performance.now();
if (rawActivity.exclusive) await drainIngestBuffer(rawStore, rawActivity.exclusive);
const drainMs = performance.now() - drain0;
const runMs = load.ms + drainMs;
const elu = performance.eventLoopUtilization(elu0);
const cpu = process.cpuUsage(cpu0);
const threads1 = threadCpu();
if (profiler && profileFile) await profiler.stop(profileFile);
const cpuMsPerBatch = (cpu.user + cpu.system) / 1000 / BATCHES;
const mainMsPerBatch = elu.active / BATCHES;
// The run's WAL is checkpointed eventually (DuckDB does it past its WAL threshold, in the commit
// that crosses it): time one here, so that the cost of the data written counts per batch too.
const ckpt0 = performance.now();
await rawActivity.query({ sql: "CHECKPOINT", params: {} }, { timeoutMs: 120_000 });
const checkpointMs = performance.now() - ckpt0;
const httpRate = records / (runMs / 1000);
const stageLines = stages.lines();

// Baseline: the same records straight into a fresh DuckDB file through ActivityStore.insert.
const direct = await openDuckDbActivityStore({ path: join(dir, "direct.duckdb") });
const keyRows = await rawStore.db
  .selectFrom("api_keys")
  .select(["id", "hash", "workspace_id", "creator_user_id"])
  .execute();
const keyRefs = new Map<string, KeyRef>(
  keyRows.map((k) => [
    k.hash,
    { id: Number(k.id), workspaceId: k.workspace_id, creatorUserId: k.creator_user_id },
  ]),
);
const batchesOfRows = bodies.map((b) => {
  const parsed = parseRecords(recordsOf(JSON.parse(b)), Date.now(), new Problems());
  const rows = parsed.map((r) => toRow(r, org.organizationId, keyRefs.get(r.apiKeyHash) as KeyRef));
  const tags = parsed.flatMap((r, i) =>
    r.classifications.map((c) => ({
      organization_id: org.organizationId,
      generation_id: r.id,
      workspace_id: rows[i]?.workspace_id ?? null,
      created_at_ms: r.createdAtMs,
      ...c,
    })),
  );
  return { rows, tags };
});
let t = performance.now();
for (const b of batchesOfRows) await direct.insert(b.rows, b.tags);
const directRate = records / ((performance.now() - t) / 1000);
await direct.close();

// Baseline: ingestGenerations in-process (no HTTP), one batch at a time, on its own stores.
const soloStore = await openSqliteStore(join(dir, "solo.sqlite"));
const soloActivity = await openDuckDbActivityStore({ path: join(dir, "solo.duckdb") });
const soloOrg = await createOrganization(soloStore, systemClock, "Solo");
// Only the management key exists in the solo organization: point every record at it.
const soloHash = hashKey(soloOrg.managementKey);
const soloItems = bodies.slice(0, Math.min(50, bodies.length)).map((b) => {
  let s = b;
  for (const h of keyHashes) s = s.replaceAll(h, soloHash);
  return s;
});
t = performance.now();
for (const b of soloItems) {
  await ingestGenerations(
    { store: soloStore, activity: soloActivity, clock: systemClock },
    soloOrg.organizationId,
    recordsOf(JSON.parse(b)),
  );
}
const soloRate = (soloItems.length * SIZE) / ((performance.now() - t) / 1000);
await soloStore.close();
await soloActivity.close();

const yard2 = yardstick(bodies);
const yard = (yard1 + yard2) / 2;

// Sanity: every record landed exactly once.
const [check] = await rawActivity.query(
  { sql: "SELECT count(*) AS n, count(DISTINCT id) AS ids FROM generations", params: {} },
  { timeoutMs: 30_000 },
);
const expected = BigInt((WARMUP + BATCHES) * SIZE);
if (check?.n !== expected || check?.ids !== expected) {
  throw new Error(
    `activity store holds ${String(check?.n)} rows / ${String(check?.ids)} ids, expected ${expected}`,
  );
}

await app.close();
await preparer?.close();
await rawStore.close();
await rawActivity.close();

const lat = load.latencies;
process.stdout.write(
  [
    "",
    `ingest bench: ${BATCHES} batches x ${SIZE} records (${fmt(bodyBytes / 1024)} KiB each), ${CLIENTS} clients, ${WARMUP} warm-up batches, ${config.ingestWorkers} ingest worker(s)`,
    "",
    `HTTP POST /activity/generations   ${fmt(httpRate).padStart(10)} records/s   (${(runMs / 1000).toFixed(2)} s, of which ${drainMs.toFixed(0)} ms writing the buffer's rest to DuckDB after the last answer)`,
    `  latency per batch               p50 ${median(lat).toFixed(1)} ms, p90 ${quantile(lat, 0.9).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms`,
    `yardstick JSON.parse only         ${fmt(yard).padStart(10)} records/s   (before ${fmt(yard1)}, after ${fmt(yard2)})`,
    `RATIO HTTP / yardstick            ${(httpRate / yard).toFixed(4)}`,
    `  with a checkpoint of the run     ${fmt(records / ((runMs + checkpointMs) / 1000)).padStart(10)} records/s   (CHECKPOINT after the run: ${checkpointMs.toFixed(0)} ms)`,
    `server CPU (all threads)          ${cpuMsPerBatch.toFixed(1)} ms per batch; main thread busy ${mainMsPerBatch.toFixed(1)} ms per batch (${(elu.utilization * 100).toFixed(0)}%)`,
    `load client CPU (its process)     ${(load.cpuMs / BATCHES).toFixed(1)} ms per batch (server + client: ${(cpuMsPerBatch + load.cpuMs / BATCHES).toFixed(1)} ms of the 2 cores' ${((2 * load.ms) / BATCHES).toFixed(1)} ms per batch)`,
    "",
    "server CPU by thread, the 10 busiest (from /proc, 10 ms ticks; ingest workers and DuckDB's threads are unnamed):",
    ...threadLines(threads0, threads1),
    "",
    "stage baselines (same records, same run):",
    `  JSON.parse + validate           ${fmt(pv).padStart(10)} records/s`,
    `  ActivityStore.insert (DuckDB)   ${fmt(directRate).padStart(10)} records/s   (HTTP / this = ${(httpRate / directRate).toFixed(3)})`,
    `  ingestGenerations, no HTTP, 1 client ${fmt(soloRate).padStart(10)} records/s`,
    "",
    "per-stage breakdown during the HTTP run (mean per batch; stages of concurrent batches overlap):",
    ...stageLines,
    `  wall time per batch (total / batches)                 ${(load.ms / BATCHES).toFixed(2).padStart(8)} ms`,
    "",
    `data dir: ${dir}${keep ? "" : " (removed)"}`,
    "",
  ].join("\n"),
);
if (!keep) rmSync(dir, { recursive: true, force: true });
