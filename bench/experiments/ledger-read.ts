/**
 * The usage ledger's reads against the length of the history behind them, side by side in one run
 * (the machine is shared and noisy: only ratios measured together mean anything).
 *
 * Two embedded record stores (SQLite files, as `npm start` opens them) hold the same keys and
 * workspaces; in "fresh" each has spent on one day only, in "history" on each of --days days up to
 * today (a day, week and month counter per period, as a key in use for that long has). Measured
 * alternately in --rounds rounds, medians reported with history / fresh:
 *   reserve  the gateway's ledger read before every reservation: one key and its workspace,
 *            synchronously on the committed-data connection (readKeyAndWorkspaceUsageCommitted);
 *   list     the current-window totals of --ids keys at once (readUsage), as GET /keys reads a page.
 * A ratio near 1 means the read costs the same whatever the history; before the statements named
 * each window's whole primary key, a year of history made both many times slower.
 *
 *   npx tsx bench/experiments/ledger-read.ts [--days 365] [--ids 100] [--rounds 5] [--reads 20000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  addUsageTally,
  readKeyAndWorkspaceUsageCommitted,
  readUsage,
  UsageTally,
} from "../../src/domain/usage/ledger.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { numberOption } from "../lib/args.js";
import { median } from "../lib/stats.js";

const opt = numberOption(process.argv.slice(2));
const DAYS = opt("days", 365);
const IDS = opt("ids", 100);
const ROUNDS = opt("rounds", 5);
const READS = opt("reads", 20_000);
const DAY_MS = 86_400_000;
const NOW = new Date();
const keyOf = (i: number) => `${String(i).padStart(4, "0")}${"k".repeat(60)}`;

async function openFilled(dir: string, days: number): Promise<RecordStore> {
  const store = await openSqliteStore(join(dir, `days-${days}.db`));
  const tally = new UsageTally();
  for (let i = 0; i < IDS; i++) {
    for (let d = 0; d < days; d++) {
      tally.add("org", keyOf(i), `ws-${i % 10}`, NOW.getTime() - d * DAY_MS, 1_000n, 0n);
    }
  }
  await store.transaction((trx) => addUsageTally(trx, tally, store.caps));
  return store;
}

/** Microseconds per reserve read, over READS reads of rotating keys. */
function reserveMicros(store: RecordStore): number {
  const start = process.hrtime.bigint();
  for (let n = 0; n < READS; n++) {
    const i = n % IDS;
    if (!readKeyAndWorkspaceUsageCommitted(store, keyOf(i), `ws-${i % 10}`, NOW)) {
      throw new Error("the store has no committed-data connection");
    }
  }
  return Number(process.hrtime.bigint() - start) / 1000 / READS;
}

/** Microseconds per list read of all IDS keys. */
async function listMicros(store: RecordStore): Promise<number> {
  const ids = Array.from({ length: IDS }, (_, i) => keyOf(i));
  const reads = Math.max(20, Math.round(READS / IDS));
  const start = process.hrtime.bigint();
  for (let n = 0; n < reads; n++) await readUsage(store.db, "key", ids, NOW);
  return Number(process.hrtime.bigint() - start) / 1000 / reads;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-ledger-"));
  try {
    const fresh = await openFilled(dir, 1);
    const history = await openFilled(dir, DAYS);
    const got = {
      fresh: { reserve: [] as number[], list: [] as number[] },
      history: { reserve: [] as number[], list: [] as number[] },
    };
    // Warm-up: statements prepared, pages cached.
    reserveMicros(fresh);
    reserveMicros(history);
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (["fresh", "history"] as const) : (["history", "fresh"] as const);
      for (const name of order) {
        const store = name === "fresh" ? fresh : history;
        got[name].reserve.push(reserveMicros(store));
        got[name].list.push(await listMicros(store));
      }
    }
    await fresh.close();
    await history.close();
    console.log(
      `\n${IDS} keys in 10 workspaces; history: ${DAYS} days of spend per key; ${ROUNDS} rounds, medians.\n`,
    );
    console.log("| read | fresh (1 day) | history | history / fresh |");
    console.log("| --- | --- | --- | --- |");
    for (const [label, k] of [
      ["reserve: one key and its workspace (µs)", "reserve"],
      [`list: ${IDS} keys at once (µs)`, "list"],
    ] as const) {
      const f = median(got.fresh[k]);
      const h = median(got.history[k]);
      console.log(`| ${label} | ${f.toFixed(1)} | ${h.toFixed(1)} | ${(h / f).toFixed(2)} |`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
