import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import { nanoToUsd } from "../../src/lib/money.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { killAll, stopServer, type ChildServer } from "../helpers/child-server.js";
import { anHourAgo, crashableServer } from "../helpers/crash-restart.js";
import { wireGeneration } from "../helpers/wire-generations.js";

/**
 * Crash safety of ingest: the real server (dist/src/main.js) on a temporary data
 * directory is killed with SIGKILL at random moments while batches are in flight, restarted on the
 * same directory, and every batch that did not get a 200 is retried (plus some that did). In the
 * end the ledger (GET /key usage) and the activity store (the DuckDB file, opened after a clean
 * stop) each hold every record exactly once.
 */
afterAll(killAll);

/** POST a batch; true on 200, false on a refused or cut connection. Any other status fails the test. */
async function send(s: ChildServer, key: string, batch: unknown[]): Promise<boolean> {
  let res: Response;
  try {
    res = await fetch(`${s.base}/activity/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ generations: batch }),
      signal: AbortSignal.timeout(20_000),
    });
  } catch {
    return false; // the server died under this request
  }
  const text = await res.text().catch(() => null);
  if (text === null) return false;
  if (res.status !== 200) {
    // The server's own account of it: its error lines (request logs are JSON, level 50 = error).
    const errors = s
      .stdout()
      .split("\n")
      .filter((l) => l.includes('"level":50') || l.includes('"level":60'));
    throw new Error(`unexpected ${res.status}: ${text}\nserver errors:\n${errors.join("\n")}\n${s.stderr()}`);
  }
  return true;
}

describe("ingest survives SIGKILL at any moment: nothing lost, nothing counted twice", () => {
  it("ledger and activity store hold every record exactly once after kills, restarts and retries", async () => {
    const crashable = crashableServer();
    const { dataDir, key } = crashable;
    const hash = hashKey(key);
    const createdAt = anHourAgo();

    const BATCHES = 60;
    const PER_BATCH = 400;
    let nano = 0n;
    const batches = Array.from({ length: BATCHES }, (_, b) =>
      Array.from({ length: PER_BATCH }, (_, i) => {
        const n = b * PER_BATCH + i + 1;
        nano += BigInt(n);
        return wireGeneration({
          id: `crash-${n}`,
          created_at: createdAt,
          api_key_hash: hash,
          usage: n / 1e9, // n nano-dollars: any double count or loss shows in the sum
          classifications:
            n % 7 === 0
              ? [
                  {
                    classifier_id: "33333333-3333-4333-8333-333333333333",
                    dimension_name: "topic",
                    value: "x",
                  },
                ]
              : undefined,
        });
      }),
    );
    const expectedNano = nano;
    const done = new Set<number>();

    for (let round = 0; round < 4; round++) {
      const server = await crashable.start();
      const pending = [...Array(BATCHES).keys()].filter((b) => !done.has(b));
      // Retry some that already succeeded too (a client that never saw the 200); once everything is
      // acknowledged, rounds keep killing the server during such retries.
      const resend = [...done].sort(() => Math.random() - 0.5).slice(0, pending.length > 0 ? 3 : 12);
      const killer = crashable.killAfter(server, 300 + Math.floor(Math.random() * 1_700));
      // Two clients in parallel, each working through its share.
      const work = [...resend, ...pending];
      const lanes = [0, 1].map(async (lane) => {
        for (let i = lane; i < work.length && !killer.killed(); i += 2) {
          const b = work[i] as number;
          if (await send(server, key, batches[b] as unknown[])) done.add(b);
        }
      });
      await Promise.all(lanes);
      await killer.now();
      if (process.env.INGEST_CRASH_DEBUG) console.log(`round ${round}: ${done.size}/${BATCHES} acknowledged`);
    }

    // Final run: retry everything not acknowledged, and a few that were, then read the ledger.
    const server = await crashable.start();
    for (let b = 0; b < BATCHES; b++) {
      if (!done.has(b) || b % 10 === 0) {
        expect(await send(server, key, batches[b] as unknown[])).toBe(true);
        done.add(b);
      }
    }
    const me = (await (
      await fetch(`${server.base}/key`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { data: { usage: number; usage_daily: number } };
    expect(crashable.kills).toBeGreaterThanOrEqual(1);
    expect(me.data.usage).toBe(nanoToUsd(expectedNano));
    await stopServer(server);

    const activity = await openDuckDbActivityStore({ path: join(dataDir, "activity.duckdb") });
    try {
      const [g] = await activity.query(
        {
          sql: "SELECT count(*) AS n, count(DISTINCT id) AS ids, sum(usage_nano) AS s FROM generations",
          params: {},
        },
        { timeoutMs: 10_000 },
      );
      expect(g).toEqual({
        n: BigInt(BATCHES * PER_BATCH),
        ids: BigInt(BATCHES * PER_BATCH),
        s: expectedNano,
      });
      const [tags] = await activity.query(
        {
          sql: "SELECT count(*) AS n, count(DISTINCT generation_id) AS ids FROM generation_tags",
          params: {},
        },
        { timeoutMs: 10_000 },
      );
      const tagged = BigInt(Math.floor((BATCHES * PER_BATCH) / 7));
      expect(tags).toEqual({ n: tagged, ids: tagged });
    } finally {
      await activity.close();
    }
  }, 90_000);
});
