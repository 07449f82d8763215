import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommittedUsage, committedUsageOf } from "../../src/domain/usage/committed-usage.js";
import {
  addUsageTally,
  readKeyAndWorkspaceUsageCommitted,
  UsageTally,
  type CounterRow,
} from "../../src/domain/usage/ledger.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";

/**
 * CommittedUsage (src/domain/usage/committed-usage.ts): the gateway's in-memory copy of committed
 * current-window totals, on a real SQLite file. After every step it must equal what the store's
 * committed-data connection reads, whatever transactions are in flight, commit or roll back.
 */
const ORG = "00000000-0000-4000-8000-000000000001";
const NOW = new Date("2026-11-25T12:00:00Z");

function rowsOf(keyHash: string, workspaceId: string, usage: bigint, byok = 0n, at = NOW): CounterRow[] {
  const tally = new UsageTally();
  tally.add(ORG, keyHash, workspaceId, at.getTime(), usage, byok);
  return tally.rows();
}

describe("CommittedUsage (SQLite in a file)", () => {
  let dir: string;
  let store: RecordStore;
  let reads = 0;
  let clockMs = 0;
  let usage: CommittedUsage;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-committed-usage-"));
    store = await openSqliteStore(join(dir, "gatehouse.db"));
    const readCommitted = store.readCommitted!;
    usage = new CommittedUsage(
      {
        db: store.db,
        afterTransaction: store.afterTransaction!,
        readCommitted: (q) => {
          reads++;
          return readCommitted(q);
        },
      },
      () => clockMs,
    );
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const truth = (k: string | null, w: string | null, now = NOW) =>
    readKeyAndWorkspaceUsageCommitted(store, k, w, now)!;

  /** A transaction writing `rows` (announced first, as recordAcceptance does), held open until released. */
  function openWrite(rows: CounterRow[]) {
    let finish: (commit: boolean) => void = () => undefined;
    const decided = new Promise<boolean>((done) => (finish = done));
    let written: () => void = () => undefined;
    const inside = new Promise<void>((done) => (written = done));
    const done = store
      .transaction(async (trx) => {
        usage.noteWrite(trx, rows);
        await addUsageTally(trx, rows, store.caps);
        written();
        if (!(await decided)) throw new Error("rolled back on purpose");
      })
      .then(
        () => true,
        () => false,
      );
    return { inside, done, end: (commit: boolean) => finish(commit) };
  }

  it("reads a key and its workspace once, then follows committed writes without reading again", async () => {
    const [k, w] = ["k1".padEnd(64, "0"), "w1"];
    await store.transaction((trx) => addUsageTally(trx, rowsOf(k, w, 100n), store.caps)); // before the copy: not announced
    reads = 0;
    expect(usage.totals(k, w, NOW)).toEqual(truth(k, w));
    expect(reads).toBe(1);
    for (let i = 1; i <= 5; i++) {
      const t = openWrite(rowsOf(k, w, BigInt(i), 7n));
      await t.inside;
      t.end(true);
      expect(await t.done).toBe(true);
      expect(usage.totals(k, w, NOW)).toEqual(truth(k, w));
    }
    expect(reads).toBe(1);
    expect(usage.totals(k, w, NOW).key.all).toEqual({ usage: 115n, byok: 35n });
  });

  it("drops what a transaction that rolls back announced", async () => {
    const [k, w] = ["k2".padEnd(64, "0"), "w2"];
    const before = usage.totals(k, w, NOW);
    expect(before.key.day.usage).toBe(0n);
    const t = openWrite(rowsOf(k, w, 50n));
    await t.inside;
    t.end(false);
    expect(await t.done).toBe(false);
    expect(usage.totals(k, w, NOW)).toEqual(truth(k, w));
    expect(usage.totals(k, w, NOW).workspace.month.usage).toBe(0n);
  });

  it("does not keep what it reads while a write to the same scope is in flight, and counts that write once", async () => {
    const [k, w] = ["k3".padEnd(64, "0"), "w3"];
    const t = openWrite(rowsOf(k, w, 9n));
    await t.inside;
    reads = 0;
    expect(usage.totals(k, w, NOW)).toEqual(truth(k, w)); // 0: not committed
    expect(usage.totals(k, w, NOW).key.all.usage).toBe(0n);
    expect(reads).toBe(2); // read through twice: nothing kept
    t.end(true);
    await t.done;
    expect(usage.totals(k, w, NOW).key.all.usage).toBe(9n);
    expect(usage.totals(k, w, NOW)).toEqual(truth(k, w));
    expect(reads).toBe(3); // kept once the write ended
  });

  it("counts a write once when reads run in every microtask between its COMMIT and the end of transaction()", async () => {
    const [k, w] = ["k6".padEnd(64, "0"), "w6"];
    const rows = rowsOf(k, w, 13n);
    let seen = 0;
    await store.transaction(async (trx) => {
      usage.noteWrite(trx, rows);
      await addUsageTally(trx, rows, store.caps);
      // Reads interleaved with Kysely's commit and the resolution of transaction(): some of them
      // see the committed row before the commit hook has run.
      void (async () => {
        for (let i = 0; i < 200; i++) {
          await Promise.resolve();
          if (truth(k, w).key.all.usage === 13n && usage.totals(k, w, NOW).key.all.usage === 13n) seen++;
        }
      })();
    });
    await new Promise((done) => setImmediate(done));
    expect(seen).toBeGreaterThan(0); // the gap was exercised
    expect(usage.totals(k, w, NOW)).toEqual(truth(k, w));
  });

  it("reads the new windows when a day, week or month ends", async () => {
    const [k, w] = ["k4".padEnd(64, "0"), "w4"];
    const t = openWrite(rowsOf(k, w, 11n));
    await t.inside;
    t.end(true);
    await t.done;
    expect(usage.totals(k, w, NOW).key.day.usage).toBe(11n);
    const nextMonth = new Date("2026-12-01T00:00:01Z");
    const later = usage.totals(k, w, nextMonth);
    expect(later).toEqual(truth(k, w, nextMonth));
    expect([later.key.day.usage, later.key.month.usage, later.key.all.usage]).toEqual([0n, 0n, 11n]);
    // A write dated in the new month reaches the new month's copy, not the old one.
    const u = openWrite(rowsOf(k, w, 4n, 0n, nextMonth));
    await u.inside;
    u.end(true);
    await u.done;
    expect(usage.totals(k, w, nextMonth)).toEqual(truth(k, w, nextMonth));
  });

  it("reads again after COMMITTED_USAGE_TTL_MS, so a write it was not told of shows within that bound", async () => {
    const [k, w] = ["k5".padEnd(64, "0"), "w5"];
    expect(usage.totals(k, w, NOW).key.all.usage).toBe(0n);
    await store.transaction((trx) => addUsageTally(trx, rowsOf(k, w, 3n), store.caps)); // unannounced
    expect(usage.totals(k, w, NOW).key.all.usage).toBe(0n);
    clockMs += 1_000;
    expect(usage.totals(k, w, NOW).key.all.usage).toBe(3n);
  });

  it("equals the committed data after any interleaving of writes that commit or roll back (property)", async () => {
    const keys = ["p1", "p2", "p3"].map((s) => s.padEnd(64, "0"));
    const spaces = ["pw1", "pw2"];
    const op = fc.oneof(
      fc.record({
        kind: fc.constant("begin" as const),
        key: fc.nat(2),
        ws: fc.nat(1),
        usage: fc.bigInt(1n, 1000n),
        byok: fc.bigInt(0n, 50n),
      }),
      fc.record({ kind: fc.constant("end" as const), commit: fc.boolean() }),
      fc.record({ kind: fc.constant("read" as const), key: fc.nat(2), ws: fc.nat(1), age: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        // SQLite runs one transaction at a time: later ones queue, and they end in the order begun.
        const open: ReturnType<typeof openWrite>[] = [];
        const check = (k: string, w: string) => expect(usage.totals(k, w, NOW)).toEqual(truth(k, w));
        for (const o of ops) {
          if (o.kind === "begin") {
            const t = openWrite(rowsOf(keys[o.key]!, spaces[o.ws]!, o.usage, o.byok));
            if (open.length === 0) await t.inside;
            open.push(t);
          } else if (o.kind === "end" && open.length > 0) {
            const t = open.shift()!;
            t.end(o.commit);
            await t.done;
            if (open.length > 0) await open[0]!.inside;
          } else if (o.kind === "read") {
            if (o.age) clockMs += 400;
            check(keys[o.key]!, spaces[o.ws]!);
          }
        }
        for (const t of open.splice(0)) {
          t.end(true);
          await t.done;
        }
        for (const k of keys) for (const w of spaces) check(k, w);
      }),
      { numRuns: 40 },
    );
  });

  it("the store refuses a hook for anything but a transaction in flight; committedUsageOf is one per store, none in memory", async () => {
    let escaped: Parameters<NonNullable<RecordStore["afterTransaction"]>>[0] | null = null;
    await store.transaction(async (trx) => {
      escaped = trx;
    });
    expect(() => store.afterTransaction!(escaped!, () => undefined)).toThrow(/not a transaction in flight/);
    expect(committedUsageOf(store)).toBe(committedUsageOf({ ...store }));
    const mem = await openSqliteStore(":memory:");
    expect(committedUsageOf(mem)).toBeNull();
    await mem.close();
  });
});
