/**
 * How long the record store's commits take when WAL checkpoints run inside them (SQLite's default)
 * against a worker thread that checkpoints (src/stores/sqlite/checkpointer.ts), in one run: two
 * SQLite files in WAL mode with the store's settings, written alike at a fixed rate, alternating
 * between them in rounds. Each transaction inserts rows filling about --pages pages (a durable
 * generation recorded alone dirties about 17), then commits; the time of each COMMIT is kept.
 *
 *   npx tsx bench/experiments/sqlite-commits.ts [--rate 50] [--commits 300] [--rounds 4] [--pages 17]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { numberOption } from "../lib/args.js";
import { quantile } from "../lib/stats.js";
import {
  FALLBACK_AUTOCHECKPOINT_PAGES,
  startCheckpointer,
  type Checkpointer,
} from "../../src/stores/sqlite/checkpointer.js";

const opt = numberOption(process.argv.slice(2));
const RATE = opt("rate", 50);
const COMMITS = opt("commits", 300);
const ROUNDS = opt("rounds", 4);
const PAGES = opt("pages", 17);

interface Side {
  label: string;
  db: BetterSqlite3.Database;
  checkpointer: Checkpointer | null;
  commitMs: number[];
}

async function open(dir: string, label: string, worker: boolean): Promise<Side> {
  const file = join(dir, `${label}.sqlite`);
  const db = new BetterSqlite3(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("create table filler (n integer primary key, b blob not null)");
  let checkpointer: Checkpointer | null = null;
  if (worker) {
    checkpointer = startCheckpointer(file, (m) => console.error(`checkpointer: ${m}`));
    db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  }
  return { label, db, checkpointer, commitMs: [] };
}

async function round(s: Side): Promise<void> {
  const insert = s.db.prepare("insert into filler (b) values (randomblob(?))");
  const begin = s.db.prepare("begin");
  const commit = s.db.prepare("commit");
  const gap = 1000 / RATE;
  const start = performance.now();
  for (let i = 0; i < COMMITS; i++) {
    const wait = start + i * gap - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    begin.run();
    for (let p = 0; p < PAGES; p++) insert.run(3800);
    const t0 = performance.now();
    commit.run();
    s.commitMs.push(performance.now() - t0);
  }
}

const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-commits-"));
const sides = [await open(dir, "in-commit", false), await open(dir, "worker", true)];
try {
  for (let r = 0; r < ROUNDS; r++) for (const s of r % 2 === 0 ? sides : [...sides].reverse()) await round(s);
  console.log(
    `\n${ROUNDS} rounds of ${COMMITS} commits at ${RATE}/s a side, ${PAGES} pages of rows per transaction\n`,
  );
  console.log("| checkpoints | p50 | p90 | p99 | longest | over 2 ms |");
  console.log("| --- | --- | --- | --- | --- | --- |");
  const f = (x: number): string => `${x.toFixed(3)} ms`;
  for (const s of sides) {
    const xs = s.commitMs;
    console.log(
      `| ${s.label} | ${f(quantile(xs, 0.5))} | ${f(quantile(xs, 0.9))} | ${f(quantile(xs, 0.99))} | ` +
        `${f(Math.max(...xs))} | ${xs.filter((x) => x > 2).length} of ${xs.length} |`,
    );
  }
  const [a, b] = sides as [Side, Side];
  console.log(
    `\nworker / in-commit: p99 ${((quantile(b.commitMs, 0.99) / quantile(a.commitMs, 0.99)) * 100).toFixed(1)} %, ` +
      `longest ${((Math.max(...b.commitMs) / Math.max(...a.commitMs)) * 100).toFixed(1)} %`,
  );
} finally {
  for (const s of sides) {
    await s.checkpointer?.close();
    s.db.close();
  }
  rmSync(dir, { recursive: true, force: true });
}
