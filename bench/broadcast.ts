/**
 * Broadcast benchmark (docs/performance.md "Broadcast"). Three measurements in one run:
 * 1. Ingest throughput with three enabled destinations vs none (same process, same stores kind,
 *    alternating rounds; the delivery worker is not running during this phase, so the ratio is
 *    the cost of the outbox write in the acceptance transaction).
 * 2. Delivery rate to a local OTLP/HTTP receiver (otel-collector encoder, batches of its maxBatch).
 * 3. Lag from acceptance to arrival at the receiver, p50 and p99, at a steady ingest load.
 * Usage: npm run bench:broadcast [-- --batches 40 --deliver 20000 --rate 2000]
 */
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { Broadcaster } from "../src/broadcast/delivery/broadcaster.js";
import { defaultEncoderLookup } from "../src/broadcast/encoder-lookup.js";
import { loadConfig } from "../src/config/config.js";
import { createDestination } from "../src/domain/destinations/create-destination.js";
import { ingestGenerations } from "../src/domain/ingest/ingest-generations.js";
import { createOrganization } from "../src/domain/organizations/create-organization.js";
import { systemClock } from "../src/lib/clock.js";
import { hashKey } from "../src/lib/ids.js";
import { SecretBox } from "../src/lib/secret-box.js";
import { openDuckDbActivityStore } from "../src/stores/duckdb/duckdb-store.js";
import { openSqliteStore } from "../src/stores/sqlite/open-sqlite.js";
import { idsOfOtlp } from "../test/helpers/broadcast-receiver.js";

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const BATCHES = arg("batches", 30);
const PER_BATCH = 1_000;
const DELIVER = arg("deliver", 20_000);
const RATE = arg("rate", 2_000);

const dir = mkdtempSync(join(tmpdir(), "gh-bench-broadcast-"));
const box = new SecretBox(Buffer.alloc(32, 3));
const arrivals = new Map<string, number>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const now = performance.now();
    for (const id of idsOfOtlp(Buffer.concat(chunks).toString("utf8")))
      if (!arrivals.has(id)) arrivals.set(id, now);
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
await new Promise<void>((d) => receiver.listen(0, "127.0.0.1", d));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;

async function setup(name: string, destinations: number) {
  const store = await openSqliteStore(join(dir, `${name}.sqlite`));
  const activity = await openDuckDbActivityStore({ path: join(dir, `${name}.duckdb`) });
  const org = await createOrganization(store, systemClock, name);
  for (let i = 0; i < destinations; i++) {
    await createDestination(store, systemClock, box, org.organizationId, {
      type: "otel-collector",
      name: `d${i}`,
      config: { endpoint: url },
    });
  }
  return { store, activity, org, hash: hashKey(org.managementKey) };
}

let seq = 0;
const createdAt = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");
const batch = (hash: string, n: number) =>
  Array.from({ length: n }, () => ({
    id: `b-${++seq}`,
    created_at: createdAt,
    api_key_hash: hash,
    model: "openai/gpt-4o",
    provider: "OpenAI",
    tokens_prompt: 100,
    tokens_completion: 20,
    usage: 0.001,
    latency_ms: 100,
  }));

// 1. Ingest throughput, none vs three destinations, alternating rounds.
const none = await setup("none", 0);
const three = await setup("three", 3);
const timeOf = async (s: typeof none) => {
  const recs = batch(s.hash, PER_BATCH);
  const t0 = performance.now();
  await ingestGenerations(
    { store: s.store, activity: s.activity, clock: systemClock },
    s.org.organizationId,
    recs,
    {
      broadcast: true,
    },
  );
  return performance.now() - t0;
};
for (let i = 0; i < 3; i++) {
  await timeOf(none);
  await timeOf(three);
}
let tNone = 0;
let tThree = 0;
for (let i = 0; i < BATCHES; i++) {
  tNone += await timeOf(none);
  tThree += await timeOf(three);
}
const rateNone = (BATCHES * PER_BATCH) / (tNone / 1000);
const rateThree = (BATCHES * PER_BATCH) / (tThree / 1000);
console.log(`ingest, no destinations:     ${Math.round(rateNone).toLocaleString("en-US")} generations/s`);
console.log(`ingest, three destinations:  ${Math.round(rateThree).toLocaleString("en-US")} generations/s`);
console.log(`ratio (three / none):        ${(rateThree / rateNone).toFixed(3)} (target >= 0.80)`);

// 2. Delivery rate: DELIVER generations queued for one destination, then the worker drains them.
const one = await setup("one", 1);
for (let i = 0; i < DELIVER; i += PER_BATCH) {
  await ingestGenerations(
    { store: one.store, activity: one.activity, clock: systemClock },
    one.org.organizationId,
    batch(one.hash, PER_BATCH),
    {
      broadcast: true,
    },
  );
}
arrivals.clear();
const settings = { ...loadConfig({}).broadcast, pollMs: 10 };
const worker = new Broadcaster({
  store: one.store,
  secretBox: box,
  clock: systemClock,
  settings,
  encoderFor: defaultEncoderLookup,
});
const d0 = performance.now();
worker.start();
while (arrivals.size < DELIVER) await new Promise((d) => setTimeout(d, 5));
const deliverySecs = (performance.now() - d0) / 1000;
console.log(
  `delivery:                    ${Math.round(DELIVER / deliverySecs).toLocaleString("en-US")} generations/s (${DELIVER} to one OTLP receiver; target >= 10,000)`,
);

// 3. Lag at a steady load: RATE generations/s in batches of 100 for 5 s, worker running.
arrivals.clear();
const accepted = new Map<string, number>();
const steadyEnd = performance.now() + 5_000;
const per = 100;
const interval = (per / RATE) * 1000;
while (performance.now() < steadyEnd) {
  const tick = performance.now();
  const recs = batch(one.hash, per);
  await ingestGenerations(
    { store: one.store, activity: one.activity, clock: systemClock },
    one.org.organizationId,
    recs,
    {
      broadcast: true,
    },
  );
  const at = performance.now();
  for (const r of recs) accepted.set(r.id, at);
  const wait = interval - (performance.now() - tick);
  if (wait > 0) await new Promise((d) => setTimeout(d, wait));
}
const until = performance.now() + 10_000;
while ([...accepted.keys()].some((id) => !arrivals.has(id)) && performance.now() < until) {
  await new Promise((d) => setTimeout(d, 10));
}
const lags = [...accepted].map(([id, at]) => (arrivals.get(id) ?? Infinity) - at).sort((a, b) => a - b);
const q = (p: number) => lags[Math.min(lags.length - 1, Math.floor(p * lags.length))] as number;
console.log(
  `lag at ${RATE}/s steady:       p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms (${lags.length} generations)`,
);

await worker.stop();
for (const s of [none, three, one]) {
  await s.store.close();
  await s.activity.close();
}
receiver.close();
rmSync(dir, { recursive: true, force: true });
