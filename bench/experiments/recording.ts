/**
 * What recording a served generation costs the server, per record, by the size of the flush that
 * stores it: the gateway's recorder (GenerationRecorder, gatherMs 0: one flush per wave) on the
 * embedded stores in files, as `npm start` runs them (SQLite with its WAL, DuckDB fed by the ingest
 * buffer with the server's 200 ms linger). Each wave queues --wave generations in one turn and
 * waits for them: one flush, one record-store transaction. Sizes are measured in rounds, in a
 * shuffled order per round; the first size (1 by default) is the baseline of the ratios, measured
 * in the same rounds. CPU comes from /proc: the main thread's, and every thread's.
 *
 * `--statements` also prints the SQLite statements' own time per record (better-sqlite3's run,
 * all and get, timed around each call), at the last size: what the record store's work is,
 * statement by statement.
 *
 *   npx tsx bench/experiments/recording.ts [--records 4000] [--rounds 3] [--sizes 1,4,20,50] [--statements]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { numberOption, stringOption } from "../lib/args.js";
import { cpuMsOf } from "../lib/child-process.js";
import { median } from "../lib/stats.js";
import { systemClock } from "../../src/lib/clock.js";
import { hashKey } from "../../src/lib/ids.js";
import { startIngestBuffer } from "../../src/domain/ingest/pipeline/ingest-buffer.js";
import { GenerationRecorder } from "../../src/gateway/recording/generation-recorder.js";
import type { ServedGeneration } from "../../src/gateway/recording/record-generation.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { makeTestApp } from "../../test/helpers/app.js";
import { servedGeneration } from "../../test/helpers/recording.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const RECORDS = opt("records", 4000);
const ROUNDS = opt("rounds", 3);
const SIZES = (stringOption(args)("sizes") ?? "1,4,20,50").split(",").map(Number);
const STATEMENTS = args.includes("--statements");

/** CPU time so far in ms (clock ticks of 10 ms): the main thread's, and the whole process's. */
function cpuMs(): { main: number; all: number } {
  const main = cpuMsOf(process.pid, process.pid);
  const all = cpuMsOf(process.pid);
  if (main === null || all === null)
    throw new Error("bench/experiments/recording.ts reads CPU times from /proc (Linux)");
  return { main, all };
}

/** SQLite statements' own time, by statement text (--statements). */
const statementMs = new Map<string, { calls: number; ms: number }>();
let timing = false;
function timeStatements(): void {
  const probe = new BetterSqlite3(":memory:");
  const proto = Object.getPrototypeOf(probe.prepare("select 1")) as Record<string, unknown>;
  probe.close();
  for (const name of ["run", "all", "get"]) {
    const original = proto[name] as (...a: unknown[]) => unknown;
    proto[name] = function (this: { source: string }, ...a: unknown[]): unknown {
      if (!timing) return original.apply(this, a);
      const t0 = performance.now();
      try {
        return original.apply(this, a);
      } finally {
        const text = this.source.replace(/\s+/g, " ").trim().slice(0, 80);
        const s = statementMs.get(text) ?? { calls: 0, ms: 0 };
        s.calls++;
        s.ms += performance.now() - t0;
        statementMs.set(text, s);
      }
    };
  }
}

function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

async function main(): Promise<void> {
  if (STATEMENTS) timeStatements();
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-recording-"));
  const store = await openSqliteStore(join(dir, "gatehouse.db"));
  const activity = await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") });
  try {
    // As src/main.ts starts it: DuckDB is written in the background, 200 ms of batches at a time.
    if (activity.exclusive) await startIngestBuffer(store, activity.exclusive, { flushLingerMs: 200 });
    const t = await makeTestApp({ store, activity, clock: systemClock });
    try {
      const created = await t.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: { name: "bench", limit: 1e9 },
      });
      const policy = await t.ctx.policy.keyByHash(hashKey(created.json<{ key: string }>().key));
      if (!policy) throw new Error("the bench key was not created");
      const recorder = new GenerationRecorder(t.app.gateway.recording);
      const generation = (): ServedGeneration =>
        servedGeneration(policy, {
          input: [{ role: "user", content: "Say hello to the benchmark." }],
          output: "Hello there, bench friend.",
          sessionId: "bench-session",
        });
      const run = async (wave: number, records: number): Promise<{ main: number; all: number }> => {
        const before = cpuMs();
        for (let done = 0; done < records; done += wave) {
          await Promise.all(Array.from({ length: wave }, () => recorder.record(generation())));
        }
        const after = cpuMs();
        return {
          main: ((after.main - before.main) * 1000) / records,
          all: ((after.all - before.all) * 1000) / records,
        };
      };
      for (const size of SIZES) await run(size, Math.min(RECORDS, 500)); // warm: JIT, statement caches
      const main = new Map<number, number[]>(SIZES.map((s) => [s, []]));
      const all = new Map<number, number[]>(SIZES.map((s) => [s, []]));
      for (let r = 0; r < ROUNDS; r++) {
        for (const size of shuffled(SIZES)) {
          const m = await run(size, RECORDS);
          main.get(size)?.push(m.main);
          all.get(size)?.push(m.all);
        }
      }
      const base = SIZES[0] as number;
      console.log(
        `${ROUNDS} rounds of ${RECORDS} records per flush size, medians; CPU per record from /proc (10 ms ticks)`,
      );
      console.log("");
      console.log(
        "| records per flush | main thread µs/record | all threads µs/record | main / size " + base + " |",
      );
      console.log("| --- | --- | --- | --- |");
      const baseMain = median(main.get(base) ?? []);
      for (const size of SIZES) {
        const m = median(main.get(size) ?? []);
        const a = median(all.get(size) ?? []);
        console.log(
          `| ${size} | ${m.toFixed(1)} | ${a.toFixed(1)} | ${((100 * m) / baseMain).toFixed(1)} % |`,
        );
      }
      if (STATEMENTS) {
        const size = SIZES[SIZES.length - 1] as number;
        statementMs.clear();
        timing = true;
        await run(size, RECORDS);
        timing = false;
        console.log("");
        console.log(`SQLite statements at ${size} records per flush (their own time, µs per record):`);
        console.log("");
        console.log("| µs/record | calls | statement |");
        console.log("| --- | --- | --- |");
        for (const [text, s] of [...statementMs].sort((x, y) => y[1].ms - x[1].ms).slice(0, 12)) {
          console.log(`| ${((s.ms * 1000) / RECORDS).toFixed(2)} | ${s.calls} | \`${text}\` |`);
        }
      }
    } finally {
      await t.close();
    }
  } finally {
    await store.close();
    await activity.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
