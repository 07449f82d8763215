import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ACTIVITY_COLUMNS, type ActivityRow } from "../../src/activity/activity-row.js";
import { compile } from "../../src/analytics/emit/compile.js";
import { buildPlan } from "../../src/analytics/plan/build-plan.js";
import type { QueryRequest } from "../../src/analytics/plan/query-request.js";
import type { ExclusiveActivityWriter } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore, type DuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { activityRow, applyRows } from "../helpers/activity-stores.js";

/**
 * Compaction of the embedded activity store (src/stores/duckdb/duckdb-compaction.ts): sealed rows
 * are rewritten sorted by (organization, key, time) in one transaction per chunk. Every row
 * survives exactly once with every value intact, analytics answers are unchanged, ingest running
 * at the same time loses nothing, idempotency still sees compacted rows, and the file
 * does not grow by the rewritten rows.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse("2026-10-01T00:00:00Z");
const ORGS = ["00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"];
const WORKSPACES = ["00000000-0000-4000-8000-0000000000a1", "00000000-0000-4000-8000-0000000000a2"];
const MODELS = ["openai/gpt-4o", "anthropic/claude-sonnet-4", "google/gemini-2.5-flash"];

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), "gh-compaction-"));
  dirs.push(dir);
  return join(dir, "activity.duckdb");
};

/** n rows over `days` days from `fromMs`, in created_at order (as a gateway sends them). */
function rows(n: number, fromMs: number, days: number, prefix: string): ActivityRow[] {
  return Array.from({ length: n }, (_, i) => {
    const h = (i * 2654435761) >>> 0;
    return activityRow({
      id: `${prefix}-${i}`,
      organization_id: ORGS[h % 7 === 0 ? 1 : 0]!,
      created_at_ms: fromMs + Math.floor((i / n) * days * DAY),
      api_key_id: 1 + (h % 13),
      workspace_id: WORKSPACES[h % 2]!,
      model: MODELS[(h >>> 3) % 3]!,
      usage_nano: BigInt(h % 100_000) * 1_000n + 7n,
      latency_ms: (h % 5000) / 7,
      tokens_prompt: h % 9000,
    });
  });
}

const ALL = `SELECT ${ACTIVITY_COLUMNS.map((c) => (c === "created_at_ms" ? "created_at" : c)).join(", ")}
  FROM generations`;

/** Every row, in (organization, id) order. */
async function all(store: DuckDbActivityStore): Promise<Record<string, unknown>[]> {
  const rows = await store.query({ sql: ALL, params: {} }, { timeoutMs: 60_000 });
  const key = (r: Record<string, unknown>) => `${r.organization_id as string}\u0000${r.id as string}`;
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

async function ingest(
  store: DuckDbActivityStore,
  list: readonly ActivityRow[],
  batch = 5_000,
): Promise<void> {
  for (let i = 0; i < list.length; i += batch) await store.insert(list.slice(i, i + batch), []);
}

const REQUESTS: QueryRequest[] = [
  {
    metrics: ["request_count", "total_usage", "avg_latency"],
    dimensions: ["model"],
    granularity: "day",
    time_range: { start: "2026-10-03T00:00:00Z", end: "2026-10-20T00:00:00Z" },
    filters: [{ field: "api_key_id", operator: "eq", value: 5 }],
  },
  {
    metrics: ["request_count", "total_usage", "tokens_prompt"],
    dimensions: ["api_key_id", "workspace"],
    time_range: { start: "2026-09-20T00:00:00Z", end: "2026-11-01T00:00:00Z" },
  },
  {
    metrics: ["request_count", "avg_latency"],
    granularity: "hour",
    time_range: { start: "2026-10-07T00:00:00Z", end: "2026-10-09T00:00:00Z" },
    filters: [{ field: "api_key_id", operator: "in", value: [2, 3, 11] }],
  },
];

/**
 * Same rows, same exact counts and money (bigints travel as strings); a float (avg) may differ in
 * its last bits, since a sum of doubles depends on the order the rows are read in.
 */
function expectSameAnswers(actual: string, expected: string): void {
  const same = (a: unknown, b: unknown): boolean =>
    typeof a === "number" && typeof b === "number"
      ? Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))
      : Array.isArray(a) && Array.isArray(b)
        ? a.length === b.length && a.every((x, i) => same(x, b[i]))
        : a !== null && b !== null && typeof a === "object" && typeof b === "object"
          ? JSON.stringify(Object.keys(a)) === JSON.stringify(Object.keys(b)) &&
            Object.keys(a).every((k) => same((a as never)[k], (b as never)[k]))
          : a === b;
  expect(same(JSON.parse(actual), JSON.parse(expected))).toBe(true);
  expect(actual.length).toBeGreaterThan(1_000); // the queries did return rows
}

async function answers(store: DuckDbActivityStore): Promise<string> {
  const out: unknown[] = [];
  for (const org of ORGS) {
    for (const body of REQUESTS) {
      const plan = buildPlan(body, new Date(Date.parse("2026-11-01T00:00:00Z")));
      const q = compile(plan, { organizationId: org, defaultWorkspaceId: WORKSPACES[0]! }, "duckdb");
      out.push(await store.query(q, { timeoutMs: 60_000 }));
    }
  }
  return JSON.stringify(out, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

/**
 * The same rows in the same order with the same values. Compared as one JSON text per row (a deep
 * comparison of tens of thousands of rows costs seconds of CPU); the first row that differs is
 * then compared with toEqual, so a failure shows that row's difference.
 */
function expectSameRows(actual: Record<string, unknown>[], expected: Record<string, unknown>[]): void {
  const text = (r: Record<string, unknown>) =>
    JSON.stringify(r, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
  expect(actual.length).toBe(expected.length);
  const at = actual.findIndex((r, i) => text(r) !== text(expected[i]!));
  if (at >= 0) expect(actual[at]).toEqual(expected[at]);
  expect(at).toBe(-1);
}

const count = async (store: DuckDbActivityStore) => {
  const [r] = await store.query(
    {
      sql: "SELECT count(*) AS n, count(DISTINCT organization_id || '/' || id) AS d FROM generations",
      params: {},
    },
    { timeoutMs: 60_000 },
  );
  return { n: Number(r!.n), distinct: Number(r!.d) };
};

describe("DuckDB activity compaction", () => {
  it("keeps every row exactly once with every value, sorts each chunk by (organization, key, time), and changes no answer", async () => {
    const store = await openDuckDbActivityStore({ path: tempFile() });
    try {
      const list = rows(30_000, T0, 20, "a");
      await ingest(store, list);
      const before = await all(store);
      const answersBefore = await answers(store);

      // Nothing is sealed yet (sealMs is an hour past the last row): nothing moves.
      expect(await store.compact({ nowMs: T0, chunkRows: 8_000 })).toEqual([]);

      const chunks = await store.compact({ nowMs: T0 + 30 * DAY, chunkRows: 8_000 });
      expect(chunks.length).toBeGreaterThanOrEqual(4);
      expect(chunks[0]!.fromMs).toBeNull();
      for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.fromMs).toBe(chunks[i - 1]!.toMs);
      // Full chunks first, then quarter chunks (level 0) of the tail.
      for (const c of chunks) expect(c.rows).toBeGreaterThanOrEqual(c.level === 1 ? 8_000 : 2_000);
      expect(chunks.map((c) => c.level)).toEqual([...chunks.map((c) => c.level)].sort().reverse());
      expect(chunks.some((c) => c.level === 0)).toBe(true);

      expect(await count(store)).toEqual({ n: 30_000, distinct: 30_000 });
      expectSameRows(await all(store), before);
      expectSameAnswers(await answers(store), answersBefore);

      // Physical order (row id) inside the first chunk: sorted by organization, key, time.
      const physical = await store.query(
        {
          sql: `SELECT organization_id AS o, api_key_id AS k, epoch_ms(created_at) AS t FROM generations
                WHERE created_at < epoch_ms($to::BIGINT) ORDER BY rowid`,
          params: { to: chunks[0]!.toMs },
        },
        { timeoutMs: 60_000 },
      );
      expect(physical.length).toBe(chunks[0]!.rows);
      const key = (r: Record<string, unknown>) => [r.o as string, Number(r.k), Number(r.t)] as const;
      for (let i = 1; i < physical.length; i++) {
        const [o1, k1, t1] = key(physical[i - 1]!);
        const [o2, k2, t2] = key(physical[i]!);
        expect(o1 < o2 || (o1 === o2 && (k1 < k2 || (k1 === k2 && t1 <= t2)))).toBe(true);
      }

      // A second run finds nothing more to do; the tail below chunkRows stays in arrival order.
      expect(await store.compact({ nowMs: T0 + 30 * DAY, chunkRows: 8_000 })).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("keeps idempotency (ids already present are skipped) and late rows working across compacted chunks", async () => {
    const store = await openDuckDbActivityStore({ path: tempFile() });
    try {
      const list = rows(12_000, T0, 10, "b");
      await ingest(store, list);
      const chunks = await store.compact({ nowMs: T0 + 20 * DAY, chunkRows: 3_000 });
      expect(chunks.length).toBeGreaterThanOrEqual(3);

      // Re-sending compacted rows adds nothing (existence check by organization, time and id).
      await ingest(store, list.slice(0, 4_000), 1_000);
      expect(await count(store)).toEqual({ n: 12_000, distinct: 12_000 });

      // A late row (its hour already compacted) lands in arrival order and is counted once.
      const late = activityRow({ id: "late-1", organization_id: ORGS[0]!, created_at_ms: T0 + HOUR });
      await store.insert([late], []);
      await store.insert([late], []);
      expect(await store.compact({ nowMs: T0 + 20 * DAY, chunkRows: 3_000 })).toEqual(expect.any(Array));
      expect(await count(store)).toEqual({ n: 12_001, distinct: 12_001 });
    } finally {
      await store.close();
    }
  });

  it("loses and duplicates nothing while batches are applied during a compaction", async () => {
    const store = await openDuckDbActivityStore({ path: tempFile() });
    const writer = store.exclusive as ExclusiveActivityWriter;
    try {
      await ingest(store, rows(30_000, T0, 20, "c"), 10_000);
      const before = await all(store);
      let compacting = true;
      const compaction = store.compact({ nowMs: T0 + 40 * DAY, chunkRows: 5_000 }).finally(() => {
        compacting = false;
      });
      // Batches during the compaction: new rows, and late rows inside the range being compacted.
      let batches = 0;
      const extra: ActivityRow[] = [];
      while (compacting || batches < 5) {
        const fresh = rows(500, T0 + (batches % 2 === 0 ? 25 * DAY : 2 * DAY), 1, `live${batches}`);
        await applyRows(writer, fresh);
        extra.push(...fresh);
        batches += 1;
      }
      const chunks = await compaction;
      expect(chunks.length).toBeGreaterThanOrEqual(5);
      const total = 30_000 + extra.length;
      expect(await count(store)).toEqual({ n: total, distinct: total });
      const after = await all(store);
      const ids = new Set(extra.map((r) => `${r.organization_id}/${r.id}`));
      const kept = after.filter((r) => !ids.has(`${r.organization_id as string}/${r.id as string}`));
      expectSameRows(kept, before);
    } finally {
      await store.close();
    }
  });

  it("does not hold batches up while it rewrites a chunk: a batch applied meanwhile commits before the chunk does", async () => {
    const store = await openDuckDbActivityStore({ path: tempFile() });
    const writer = store.exclusive as ExclusiveActivityWriter;
    try {
      await ingest(store, rows(100_000, T0, 10, "big"), 50_000);
      const watermarks = () =>
        store.query({ sql: "SELECT level FROM activity_compaction", params: {} }, { timeoutMs: 10_000 });
      expect(await watermarks()).toEqual([]);
      const compaction = store.compact({ nowMs: T0 + 40 * DAY, chunkRows: 100_000 });
      await new Promise((done) => setTimeout(done, 50)); // the chunk's rewrite has begun
      await applyRows(writer, rows(100, T0 + 30 * DAY, 1, "meanwhile"));
      // Committed while the chunk's transaction is still open (its watermark not yet written).
      expect(await watermarks()).toEqual([]);
      const chunks = await compaction;
      expect(chunks.map((c) => c.rows)).toEqual([100_000]);
      expect(await count(store)).toEqual({ n: 100_100, distinct: 100_100 });
    } finally {
      await store.close();
    }
  });

  it("reclaims the rewritten rows' space: free blocks stay within about a chunk, used blocks near the plain file's", async () => {
    // Chunks as large as DuckDB's row group (122,880 rows), as the default (1M rows) is: a chunk's
    // originals then fill whole row groups, which the checkpoint after the chunk drops. (Chunks
    // much smaller than a row group leave partly deleted row groups behind, whose space comes back
    // only in part: docs/operations.md.)
    const CHUNK = 130_000;
    const plainPath = tempFile();
    const compactedPath = tempFile();
    const plain = await openDuckDbActivityStore({ path: plainPath });
    const compacted = await openDuckDbActivityStore({ path: compactedPath });
    let rewritten = 0;
    try {
      for (let round = 0; round < 3; round++) {
        const list = rows(CHUNK, T0 + round * 10 * DAY, 10, `d${round}`);
        await ingest(plain, list, 26_000);
        await ingest(compacted, list, 26_000);
        const chunks = await compacted.compact({
          nowMs: T0 + (round + 1) * 10 * DAY + 2 * HOUR,
          chunkRows: CHUNK,
        });
        rewritten += chunks.reduce((n, c) => n + c.rows, 0);
      }
      expect((await count(compacted)).n).toBe(3 * CHUNK);
    } finally {
      await plain.close();
      await compacted.close();
    }
    // Every row was rewritten once: kept, the originals would double the used blocks.
    expect(rewritten).toBe(3 * CHUNK);
    // Closed, both files are checkpointed; their blocks, read on reopening.
    const blocks = async (path: string) => {
      const store = await openDuckDbActivityStore({ path });
      try {
        const [r] = await store.query(
          { sql: "SELECT used_blocks, free_blocks, block_size FROM pragma_database_size()", params: {} },
          { timeoutMs: 10_000 },
        );
        return { used: Number(r!.used_blocks), free: Number(r!.free_blocks), size: Number(r!.block_size) };
      } finally {
        await store.close();
      }
    };
    const p = await blocks(plainPath);
    const c = await blocks(compactedPath);
    // One chunk's rows take about a third of the plain file's used blocks here. Free after the
    // last chunk: its originals' blocks, and the metadata the checkpoint replaced (about a chunk
    // and a half in all; 16 blocks against a chunk of 13 when written). Unreclaimed, the used
    // blocks would be twice the plain file's; freed but never reused, the free ones three chunks.
    const chunkBlocks = Math.ceil(p.used / 3);
    expect(c.used).toBeLessThanOrEqual(Math.ceil(p.used * 1.25) + 1);
    expect(c.free).toBeLessThanOrEqual(Math.ceil(chunkBlocks * 1.5) + 2);
    expect(statSync(compactedPath).size).toBeLessThanOrEqual(
      statSync(plainPath).size + (Math.ceil(chunkBlocks * 1.5) + 6) * c.size,
    );
  });

  it("survives a reopen: the watermark persists and compaction resumes where it stopped", async () => {
    const path = tempFile();
    let store = await openDuckDbActivityStore({ path });
    await ingest(store, rows(20_000, T0, 10, "e"));
    const first = await store.compact({ nowMs: T0 + 5 * DAY, chunkRows: 5_000 });
    await store.close();
    store = await openDuckDbActivityStore({ path });
    try {
      const rest = await store.compact({ nowMs: T0 + 20 * DAY, chunkRows: 5_000 });
      // Full chunks resume at the last full chunk's end (they merge the quarter chunks after it).
      expect(rest[0]!.level).toBe(1);
      expect(rest[0]!.fromMs).toBe(first.filter((c) => c.level === 1).at(-1)!.toMs);
      expect(await count(store)).toEqual({ n: 20_000, distinct: 20_000 });
    } finally {
      await store.close();
    }
  });
});
