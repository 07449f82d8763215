import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDuckDbActivityStore, type DuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { activityRow } from "../helpers/activity-stores.js";

/**
 * Crash safety of compaction: a process compacting the activity file is killed with SIGKILL at
 * random moments; after each kill the file opens and holds exactly the rows it held before (same
 * count, same ids, same money), and compaction resumes from the last committed chunk.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "gh-compaction-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROWS = 120_000;
const CHUNK = 15_000;
const T0 = Date.parse("2026-09-01T00:00:00Z");

async function fingerprint(store: DuckDbActivityStore) {
  const [r] = await store.query(
    {
      sql: `SELECT count(*) AS n, count(DISTINCT id) AS ids, sum(usage_nano)::VARCHAR AS usage,
                   sum(hash(id || api_key_id::VARCHAR || epoch_ms(created_at)::VARCHAR) % 1000000007)::VARCHAR AS h
            FROM generations`,
      params: {},
    },
    { timeoutMs: 60_000 },
  );
  return r;
}

/** Runs the child; kills it `afterMs` after it starts compacting (null: lets it finish). */
function runChild(path: string, afterMs: number | null): Promise<{ out: string; signal: string | null }> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/helpers/compact-child.ts", path, String(CHUNK)],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
      },
    );
    let out = "";
    let err = "";
    child.stderr.on("data", (b: Buffer) => (err += b.toString("utf8")));
    child.stdout.on("data", (b: Buffer) => {
      const first = !out.includes("compacting");
      out += b.toString("utf8");
      if (first && out.includes("compacting") && afterMs !== null) {
        setTimeout(() => child.kill("SIGKILL"), afterMs);
      }
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`compaction child hung:\n${out}\n${err}`));
    }, 120_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (signal === null && code !== 0)
        fail(new Error(`compaction child failed (${code}):\n${out}\n${err}`));
      else done({ out, signal });
    });
  });
}

describe("compaction crash safety (kill -9)", () => {
  it("never loses or duplicates a row, whenever the process dies", { timeout: 240_000 }, async () => {
    const path = join(dir, "activity.duckdb");
    let store = await openDuckDbActivityStore({ path });
    const rows = Array.from({ length: ROWS }, (_, i) =>
      activityRow({
        id: `k-${i}`,
        created_at_ms: T0 + i * 20_000,
        api_key_id: 1 + ((i * 7919) % 17),
        usage_nano: BigInt(1 + (i % 997)),
      }),
    );
    for (let i = 0; i < ROWS; i += 20_000) await store.insert(rows.slice(i, i + 20_000), []);
    const expected = await fingerprint(store);
    expect(Number(expected!.n)).toBe(ROWS);
    await store.close();

    let killed = 0;
    for (const afterMs of [30, 250, 600, 120, 900, 400]) {
      const { signal } = await runChild(path, afterMs);
      if (signal === "SIGKILL") killed += 1;
      store = await openDuckDbActivityStore({ path });
      expect(await fingerprint(store)).toEqual(expected);
      await store.close();
    }
    expect(killed).toBeGreaterThan(0);

    const { out } = await runChild(path, null);
    expect(out).toMatch(/done \d+/);
    store = await openDuckDbActivityStore({ path });
    try {
      expect(await fingerprint(store)).toEqual(expected);
      // Everything sealed is compacted now: nothing is left to do.
      expect(await store.compact({ nowMs: Date.parse("2100-01-01T00:00:00Z"), chunkRows: CHUNK })).toEqual(
        [],
      );
    } finally {
      await store.close();
    }
  });
});
