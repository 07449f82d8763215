/**
 * The Broadcast worker's periodic statements against the backlog of a destination that is down,
 * side by side in one run (the machine is shared and noisy: only ratios measured together mean
 * anything).
 *
 * Two embedded record stores (SQLite files, migrated as `npm start` migrates them) hold the same
 * ten live destinations, one deleted, and the same 1,000 delivered and 1,000 dead rows; in
 * "backlog" one destination has also been down for --backlog deliveries (each pending, backing
 * off, with its outbox batch). Each statement of the worker's pass that touches the deliveries
 * runs --reads times on each store, alternating, in --rounds rounds (medians):
 *   release  releaseBatches: outbox batches that no pending delivery needs (every second);
 *   prune    pruneDeliveries: retention and deleted destinations' rows (every second);
 *   due      dueDestinations: destinations with deliveries due (every poll, 250 ms);
 *   status   statusOfRow: the destination's delivery status page.
 * A ratio near 1 means the pass costs the same whatever the backlog.
 *
 *   npx tsx bench/experiments/outbox-backlog.ts [--backlog 20000] [--rounds 5] [--reads 20]
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { statusOfRow } from "../../src/broadcast/operations/delivery-status.js";
import { dueDestinations } from "../../src/broadcast/outbox/due-destinations.js";
import { releaseBatches } from "../../src/broadcast/outbox/batches-repo.js";
import { pruneDeliveries } from "../../src/broadcast/outbox/queue-upkeep.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { numberOption } from "../lib/args.js";
import { median } from "../lib/stats.js";

const opt = numberOption(process.argv.slice(2));
const BACKLOG = opt("backlog", 20_000);
const ROUNDS = opt("rounds", 5);
const READS = opt("reads", 20);
const NOW = Date.now();
const DOWN = "dest-down";

/** Fills the file directly (the shapes the outbox writes), then opens it as a store. */
async function openFilled(file: string, backlog: number): Promise<RecordStore> {
  await (await openSqliteStore(file)).close();
  const raw = new BetterSqlite3(file);
  raw.pragma("foreign_keys = OFF"); // the destinations' organization and workspace are not needed here
  const destination = raw.prepare(
    `INSERT INTO destinations (id, organization_id, workspace_id, type, name, enabled, privacy_mode,
       broadcast_generation_cost, broadcast_generation_identity, broadcast_generation_request_context,
       sampling_rate, regions, config_ciphertext, created_at, updated_at, deleted_at)
     VALUES (?, 'org', 'ws', 'webhook', ?, 1, 0, 1, 1, 1, 1, '[]', 'x', ?, ?, ?)`,
  );
  const batch = raw.prepare(
    `INSERT INTO broadcast_batches (organization_id, created_at_ms, payload, contexts, destination_ids, fanned_out)
     VALUES ('org', ?, '{}', NULL, '[]', 1)`,
  );
  const delivery = raw.prepare(
    `INSERT INTO broadcast_deliveries (destination_id, organization_id, batch_seq, ids, item_count,
       min_created_ms, max_created_ms, state, attempts, created_at_ms, next_attempt_ms, lease_owner,
       lease_until_ms, last_error, finished_at_ms)
     VALUES (?, 'org', ?, '[]', 2, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?)`,
  );
  const iso = new Date(NOW).toISOString();
  raw.transaction(() => {
    for (let d = 0; d < 10; d++) destination.run(d === 0 ? DOWN : `dest-${d}`, `d${d}`, iso, iso, null);
    destination.run("dest-deleted", "deleted", iso, iso, iso);
    for (let i = 0; i < 2_000; i++) {
      const t = NOW - 1_000 * (2_000 - i);
      const seq = Number(batch.run(t).lastInsertRowid);
      const dead = i % 2 === 1;
      delivery.run(
        `dest-${1 + (i % 9)}`,
        seq,
        t,
        t,
        dead ? "dead" : "delivered",
        1,
        t,
        t,
        dead ? "HTTP 400" : null,
        t,
      );
    }
    for (let i = 0; i < backlog; i++) {
      const t = NOW - 1_000 * (backlog - i);
      const seq = Number(batch.run(t).lastInsertRowid);
      delivery.run(DOWN, seq, t, t, "pending", 5, t, NOW + 60_000, "HTTP 503", null);
    }
  })();
  raw.close();
  return openSqliteStore(file);
}

type Step = "release" | "prune" | "due" | "status";
const STEPS: Record<Step, (s: RecordStore) => Promise<unknown>> = {
  release: (s) => releaseBatches(s.db),
  prune: (s) => pruneDeliveries(s.db, NOW, 7 * 86_400_000, 30 * 86_400_000),
  due: (s) => dueDestinations(s.db, NOW, 200),
  status: (s) => statusOfRow(s.db, DOWN, NOW),
};

/** Milliseconds per run of the step. */
async function timed(store: RecordStore, step: Step): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < READS; i++) await STEPS[step](store);
  return (performance.now() - start) / READS;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-outbox-"));
  try {
    const healthy = await openFilled(join(dir, "healthy.db"), 0);
    const backlog = await openFilled(join(dir, "backlog.db"), BACKLOG);
    const got = new Map<string, number[]>();
    for (let r = 0; r < ROUNDS; r++) {
      for (const step of Object.keys(STEPS) as Step[]) {
        for (const [name, store] of r % 2 === 0
          ? ([
              ["healthy", healthy],
              ["backlog", backlog],
            ] as const)
          : ([
              ["backlog", backlog],
              ["healthy", healthy],
            ] as const)) {
          const k = `${step}:${name}`;
          got.set(k, [...(got.get(k) ?? []), await timed(store, step)]);
        }
      }
    }
    await healthy.close();
    await backlog.close();
    console.log(
      `\nbacklog: one destination down with ${BACKLOG} pending deliveries; ${ROUNDS} rounds, medians.\n`,
    );
    console.log("| statement | healthy (ms) | backlog (ms) | backlog / healthy |");
    console.log("| --- | --- | --- | --- |");
    for (const step of Object.keys(STEPS) as Step[]) {
      const h = median(got.get(`${step}:healthy`)!);
      const b = median(got.get(`${step}:backlog`)!);
      console.log(`| ${step} | ${h.toFixed(3)} | ${b.toFixed(3)} | ${(b / h).toFixed(2)} |`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
