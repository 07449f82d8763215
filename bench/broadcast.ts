/**
 * Broadcast benchmark (docs/performance.md "Broadcast"). Three measurements in one run:
 * 1. Ingest throughput with three enabled destinations vs none (same process, same stores kind,
 *    alternating rounds; the delivery worker is not running during this phase, so the ratio is
 *    the cost of the outbox write in the acceptance transaction).
 * 2. Delivery rate to a local OTLP/HTTP receiver (otel-collector encoder, batches of its
 *    maxBatch; the receiver parses every body in its own process): `--deliver` generations queued
 *    for one destination, then the worker drains them. Besides the wall-clock rate, the bench
 *    process's CPU time during the drain (worker, SQLite, encoding, HTTP client; the receiver
 *    is another process) gives generations per CPU-second: what one core delivers, which the
 *    wall-clock rate understates when other jobs share the machine. Alternating rounds of the production
 *    encoder (the direct JSON writer) and a baseline: the same worker with the former encoder
 *    (otlp-transformer's JsonTraceSerializer, test/helpers/otlp-reference.ts). Two kinds of
 *    generations: ingest records only (metadata), and gateway-served ones with content
 *    (a LiveContext: prompt ≈ 0.5 KB, completion ≈ 0.9 KB, parameters, trace, two attempts).
 * 3. Lag from acceptance to arrival at the receiver, p50 and p99, at a steady ingest load, without
 *    a linger (BROADCAST_LINGER_MS=0) and with the default one.
 * Usage: npm run bench:broadcast [-- --batches 40 --deliver 20000 --rate 2000 --rounds 2 --per 100]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Broadcaster, type EncoderLookup } from "../src/broadcast/delivery/broadcaster.js";
import { defaultEncoderLookup } from "../src/broadcast/encoder-lookup.js";
import { DEFAULT_OTLP_OPTIONS } from "../src/broadcast/encoders/otlp-json.js";
import { OutboxSignal } from "../src/broadcast/outbox/outbox-signal.js";
import { outboxSink } from "../src/broadcast/outbox/outbox-sink.js";
import type { LiveContext } from "../src/broadcast/live-context.js";
import { loadConfig } from "../src/config/config.js";
import { outboundPolicy } from "../src/lib/outbound-policy.js";
import { createDestination } from "../src/domain/destinations/create-destination.js";
import { ingestGenerations } from "../src/domain/ingest/ingest-generations.js";
import { createOrganization } from "../src/domain/organizations/create-organization.js";
import { systemClock } from "../src/lib/clock.js";
import { hashKey } from "../src/lib/ids.js";
import { SecretBox } from "../src/lib/secret-box.js";
import { openDuckDbActivityStore } from "../src/stores/duckdb/duckdb-store.js";
import { openSqliteStore } from "../src/stores/sqlite/open-sqlite.js";
import { referenceOtlpJsonBytes } from "../test/helpers/otlp-reference.js";
import { nowEpochMs, startReceiverProcess } from "./lib/otlp-receiver-process.js";

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const BATCHES = arg("batches", 30);
const PER_BATCH = 1_000;
const DELIVER = arg("deliver", 20_000);
const RATE = arg("rate", 2_000);
const ROUNDS = arg("rounds", 2);

const dir = mkdtempSync(join(tmpdir(), "gh-bench-broadcast-"));
const box = new SecretBox(Buffer.alloc(32, 3));
const receiver = await startReceiverProcess();
const { arrivals } = receiver;
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

// The receiver is a loopback process: allowed as an operator allows a local collector.
const defaults = loadConfig({ BROADCAST_ALLOWED_PRIVATE_HOSTS: "127.0.0.1/8,::1" }).broadcast;

let stores = 0;
async function setup(destinations: number) {
  const name = `s${++stores}`;
  const store = await openSqliteStore(join(dir, `${name}.sqlite`));
  const activity = await openDuckDbActivityStore({ path: join(dir, `${name}.duckdb`) });
  const org = await createOrganization(store, systemClock, name);
  for (let i = 0; i < destinations; i++) {
    await createDestination(
      store,
      systemClock,
      box,
      org.organizationId,
      {
        type: "otel-collector",
        name: `d${i}`,
        config: { endpoint: receiver.url },
      },
      outboundPolicy(defaults),
    );
  }
  const close = async () => {
    await store.close();
    await activity.close();
  };
  return { store, activity, org, hash: hashKey(org.managementKey), close };
}
type Setup = Awaited<ReturnType<typeof setup>>;

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

/** What the gateway would attach to a generation it served (docs/broadcast.md "Content"). */
const liveContext = (i: number): LiveContext => ({
  input: [
    { role: "system", content: "You are a helpful assistant for an online shop. ".repeat(6) },
    {
      role: "user",
      content: `Question ${i}: which of my orders shipped last week, and when do they arrive?`,
    },
  ],
  output: `Two of your orders shipped on Tuesday; they should arrive on Friday. `.repeat(13),
  params: { temperature: 0.7, max_tokens: 512, top_p: 0.9 },
  trace: { trace_name: "support", generation_name: "answer", environment: "prod" },
  attempts: [
    { provider: "Azure", model: "openai/gpt-4o", status: 503, durationMs: 120 },
    { provider: "OpenAI", model: "openai/gpt-4o", status: 200, durationMs: 1700 },
  ],
  appTitle: "Shop",
  referer: "https://shop.example",
  sessionId: `s-${i % 50}`,
  promptCostUsd: 0.0009,
  completionCostUsd: 0.00033,
});

/** The process's outbox signal: ingest's sink signals it, the workers below wait on it. */
const outboxSignal = new OutboxSignal();
const accepted = outboxSink(outboxSignal);

async function ingest(s: Setup, recs: ReturnType<typeof batch>, content: boolean): Promise<void> {
  const liveContexts = content ? new Map(recs.map((r, i) => [r.id, liveContext(i)])) : undefined;
  await ingestGenerations(
    { store: s.store, activity: s.activity, clock: systemClock, accepted },
    s.org.organizationId,
    recs,
    { broadcast: true, liveContexts },
  );
}

// 1. Ingest throughput, none vs three destinations, alternating rounds.
const none = await setup(0);
const three = await setup(3);
const timeOf = async (s: Setup) => {
  const t0 = performance.now();
  await ingest(s, batch(s.hash, PER_BATCH), false);
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
console.log(`ingest, no destinations:     ${fmt(rateNone)} generations/s`);
console.log(`ingest, three destinations:  ${fmt(rateThree)} generations/s`);
console.log(`ratio (three / none):        ${(rateThree / rateNone).toFixed(3)} (target >= 0.80)`);
await none.close();
await three.close();

// 2. Delivery rate, production encoder vs the former one, alternating rounds.
const settings = { ...defaults, pollMs: 10 };
/** The otel-collector type rendered by otlp-transformer's serializer (the former encoder). */
const formerEncoders: EncoderLookup = (type) => {
  const encoder = defaultEncoderLookup(type);
  if (type !== "otel-collector" || encoder === undefined) return encoder;
  return {
    ...encoder,
    encode: (gens, config) =>
      gens.length === 0
        ? []
        : [
            {
              method: "POST",
              url: String(config.endpoint),
              headers: { "content-type": "application/json" },
              body: referenceOtlpJsonBytes(gens, DEFAULT_OTLP_OPTIONS),
            },
          ],
  };
};

interface Rate {
  wall: number;
  cpu: number;
}

async function deliveryRate(encoderFor: EncoderLookup, content: boolean): Promise<Rate> {
  const one = await setup(1);
  for (let i = 0; i < DELIVER; i += PER_BATCH) await ingest(one, batch(one.hash, PER_BATCH), content);
  arrivals.clear();
  const worker = new Broadcaster({
    store: one.store,
    secretBox: box,
    clock: systemClock,
    settings,
    encoderFor,
    outboxSignal,
  });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  worker.start();
  while (arrivals.size < DELIVER) await new Promise((d) => setTimeout(d, 2));
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await worker.stop();
  await one.close();
  return { wall: DELIVER / secs, cpu: DELIVER / ((cpu.user + cpu.system) / 1e6) };
}

for (const content of [false, true]) {
  const former: Rate = { wall: 0, cpu: 0 };
  const current: Rate = { wall: 0, cpu: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    const f = await deliveryRate(formerEncoders, content);
    const c = await deliveryRate(defaultEncoderLookup, content);
    former.wall += f.wall / ROUNDS;
    former.cpu += f.cpu / ROUNDS;
    current.wall += c.wall / ROUNDS;
    current.cpu += c.cpu / ROUNDS;
  }
  const kind = content ? "served, with content" : "ingest records (metadata)";
  const line = (r: Rate) => `${fmt(r.wall)} generations/s; ${fmt(r.cpu)} per CPU-second`;
  const wall = (current.wall / former.wall).toFixed(2);
  const cpu = (current.cpu / former.cpu).toFixed(2);
  console.log(`delivery, ${kind}:`);
  console.log(`  former encoder (otlp-transformer): ${line(former)}`);
  console.log(`  direct JSON writer:                ${line(current)} (target >= 10,000/s)`);
  console.log(`  ratio (writer / former):           ${wall} wall, ${cpu} CPU`);
}

// 3. Lag at a steady load: RATE generations/s in batches of PER_LAG for 5 s, worker running, with
// no linger (BROADCAST_LINGER_MS=0) and with the default linger: the linger's price in lag.
const PER_LAG = arg("per", 100);
async function lagAt(lingerMs: number): Promise<void> {
  const lagStore = await setup(1);
  const worker = new Broadcaster({
    store: lagStore.store,
    secretBox: box,
    clock: systemClock,
    settings: { ...settings, lingerMs },
    encoderFor: defaultEncoderLookup,
    outboxSignal,
  });
  worker.start();
  arrivals.clear();
  const accepted = new Map<string, number>();
  const steadyEnd = performance.now() + 5_000;
  const interval = (PER_LAG / RATE) * 1000;
  while (performance.now() < steadyEnd) {
    const tick = performance.now();
    const recs = batch(lagStore.hash, PER_LAG);
    await ingest(lagStore, recs, false);
    const at = nowEpochMs();
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
    `lag at ${RATE}/s steady (batches of ${PER_LAG}), linger ${lingerMs} ms: p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms (${lags.length} generations)`,
  );
  await worker.stop();
  await lagStore.close();
}
for (const lingerMs of [0, settings.lingerMs]) await lagAt(lingerMs);

await receiver.stop();
rmSync(dir, { recursive: true, force: true });
