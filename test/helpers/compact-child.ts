/**
 * Child process of test/process/compaction-crash.test.ts: opens the DuckDB activity file given as
 * argv[2], says "compacting", compacts every sealed chunk of argv[3] rows, says "done". The test
 * kills it with SIGKILL somewhere in between.
 */
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";

const [path, chunkRows] = process.argv.slice(2) as [string, string];
const store = await openDuckDbActivityStore({ path });
process.stdout.write("compacting\n");
const chunks = await store.compact({
  nowMs: Date.parse("2100-01-01T00:00:00Z"),
  chunkRows: Number(chunkRows),
});
await store.close();
process.stdout.write(`done ${chunks.length}\n`);
