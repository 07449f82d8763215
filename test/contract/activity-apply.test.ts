import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIVITY_COLUMNS, type ActivityRow } from "../../src/activity/activity-row.js";
import type { ActivityStore, ExclusiveActivityWriter } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { GENERATION_COLUMNS } from "../../src/stores/activity-columns.js";
import { encodeActivity } from "../../src/stores/column-texts.js";
import { activityRow, applyRows, tagOf } from "../helpers/activity-stores.js";

/**
 * The single-writer entry point of the embedded activity store (ActivityStore.exclusive), which
 * the ingest buffer's flusher uses: applied rows land exactly as insert() writes them (every
 * column, every value), several batches in one transaction, together with their buffer sequence
 * numbers (all or nothing).
 */
const SELECT_ALL = `SELECT ${ACTIVITY_COLUMNS.map((c) => (c === "created_at_ms" ? "created_at" : c)).join(", ")}
  FROM generations WHERE organization_id = $org ORDER BY id`;

describe("DuckDB buffered writes (ActivityStore.exclusive)", () => {
  let store: ActivityStore;
  let writer: ExclusiveActivityWriter;
  const dir = mkdtempSync(join(tmpdir(), "gh-apply-"));
  beforeAll(async () => {
    store = await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") });
    writer = store.exclusive as ExclusiveActivityWriter;
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const rowsOf = (org: string) => store.query({ sql: SELECT_ALL, params: { org } }, { timeoutMs: 10_000 });
  const tagsOf = (org: string) =>
    store.query(
      {
        sql: `SELECT generation_id, workspace_id, created_at, classifier_id, dimension_name, value
              FROM generation_tags WHERE organization_id = $org ORDER BY generation_id, dimension_name, value`,
        params: { org },
      },
      { timeoutMs: 10_000 },
    );

  it("is offered by the embedded store, with an owner naming its file", async () => {
    expect(writer.owner).toContain(join(dir, "activity.duckdb"));
    const memory = await openDuckDbActivityStore({ path: ":memory:" });
    const other = await openDuckDbActivityStore({ path: ":memory:" });
    try {
      expect(memory.exclusive?.owner).not.toBe(other.exclusive?.owner);
    } finally {
      await memory.close();
      await other.close();
    }
  });

  const text = fc.oneof(
    fc.string({ minLength: 0, maxLength: 12 }),
    fc.constantFrom(
      "",
      "x'); DROP TABLE generations; --",
      'quote " and \\ backslash',
      "ünï €😀",
      "a\u0001b",
      "\u0002",
      "\n\t",
    ),
  );
  const money = fc.oneof(
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    fc.constantFrom(0n, 9_007_199_254_740_993n, -5n),
  );
  const double = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(0, -0, 0.1 + 0.2, 1e-300, 123.456789012345, 5e-324, 1.7976931348623157e308),
  );
  const rowArb = (org: string, i: number) =>
    fc
      .record({
        created_at_ms: fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }),
        api_key_id: fc.integer({ min: 1, max: 2 ** 40 }),
        workspace_id: fc.option(fc.uuid(), { nil: null }),
        model: text,
        variant: fc.option(text, { nil: null }),
        app_id: fc.option(fc.integer({ min: 1, max: 2 ** 50 }), { nil: null }),
        user_id: fc.option(text, { nil: null }),
        country: fc.option(text, { nil: null }),
        tokens_prompt: fc.nat(),
        tokens_cached: fc.maxSafeNat(),
        is_byok: fc.boolean(),
        cancelled: fc.boolean(),
        usage_nano: money,
        usage_data_nano: money,
        latency_ms: double,
        generation_time_ms: fc.option(double, { nil: null }),
        throughput: fc.option(double, { nil: null }),
      })
      .map((over) => activityRow({ organization_id: org, id: `r-${i}`, ...over }));

  it("writes every column exactly as insert() does (random rows, odd strings, extreme numbers)", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 6 })
          .chain((n) =>
            fc.tuple(
              ...Array.from({ length: n }, (_, i) => rowArb("00000000-0000-4000-8000-00000000aaaa", i)),
            ),
          ),
        async (rows) => {
          run += 1;
          const viaInsert = `00000000-0000-4000-8000-${String(run).padStart(8, "0")}0001`;
          const viaApply = `00000000-0000-4000-8000-${String(run).padStart(8, "0")}0002`;
          await store.insert(
            rows.map((r) => ({ ...r, organization_id: viaInsert })),
            [],
          );
          await applyRows(
            writer,
            rows.map((r) => ({ ...r, organization_id: viaApply })),
            rows.map((r) => tagOf({ ...r, organization_id: viaApply }, { value: r.model || "v" })),
          );
          const a = await rowsOf(viaInsert);
          const b = await rowsOf(viaApply);
          expect(b.map((r) => ({ ...r, organization_id: viaInsert }))).toEqual(a);
          expect(await tagsOf(viaApply)).toHaveLength(rows.length);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("round-trips a known row (nulls, 2^53 + 1, negative money, milliseconds)", async () => {
    const org = "00000000-0000-4000-8000-0000000000d1";
    const row: ActivityRow = activityRow({
      organization_id: org,
      id: "known",
      created_at_ms: Date.parse("2026-11-18T12:34:56.789Z"),
      workspace_id: null,
      variant: "",
      app_id: 7,
      usage_nano: 9_007_199_254_740_993n,
      usage_data_nano: -5n,
      latency_ms: 12.5,
      generation_time_ms: null,
      throughput: null,
    });
    await applyRows(writer, [row]);
    const [got] = await rowsOf(org);
    expect(got).toMatchObject({
      created_at: "2026-11-18T12:34:56.789Z",
      workspace_id: null,
      variant: "",
      app_id: 7n,
      usage_nano: 9_007_199_254_740_993n,
      usage_data_nano: -5n,
      latency_ms: 12.5,
      generation_time_ms: null,
      throughput: null,
    });
  });

  it("applies several batches in one transaction with their sequence numbers, which it remembers until forgotten", async () => {
    const org = "00000000-0000-4000-8000-0000000000d2";
    const a = activityRow({ organization_id: org, id: "a" });
    const b = activityRow({ organization_id: org, id: "b" });
    const c = activityRow({ organization_id: org, id: "c" });
    await writer.apply(
      [encodeActivity([a], [tagOf(a)]), encodeActivity([], []), encodeActivity([b, c], [tagOf(c)])],
      [7, 8, 9],
    );
    expect((await rowsOf(org)).map((r) => r.id)).toEqual(["a", "b", "c"]);
    expect((await tagsOf(org)).map((r) => r.generation_id)).toEqual(["a", "c"]);
    expect(await writer.applied()).toEqual([7, 8, 9]);
    await writer.forget([7, 9, 12]);
    expect(await writer.applied()).toEqual([8]);
    await writer.forget([8]);
    expect(await writer.applied()).toEqual([]);
  });

  it("applies nothing, rows or numbers, when a batch fails", async () => {
    const org = "00000000-0000-4000-8000-0000000000d6";
    const good = encodeActivity([activityRow({ organization_id: org, id: "ok" })], []);
    // A column text that does not cast (a count that is not a number) fails the insert.
    const bad = encodeActivity([activityRow({ organization_id: org, id: "bad" })], []);
    const col = GENERATION_COLUMNS.findIndex((c) => c.name === "tokens_prompt");
    (bad.generations.texts as string[])[col] = "not a number";
    await expect(writer.apply([good, bad], [21, 22])).rejects.toThrow();
    expect(await rowsOf(org)).toEqual([]);
    expect(await writer.applied()).toEqual([]);
    await writer.apply([good], [23]);
    expect((await rowsOf(org)).map((r) => r.id)).toEqual(["ok"]);
    await writer.forget([23]);
  });

  it("applies a large batch (more rows than one vector) in one transaction", async () => {
    const org = "00000000-0000-4000-8000-0000000000d5";
    const rows = Array.from({ length: 5_000 }, (_, i) =>
      activityRow({ organization_id: org, id: `bulk-${i}`, usage_nano: BigInt(i) }),
    );
    await applyRows(writer, rows);
    const [r] = await store.query(
      {
        sql: "SELECT count(*) AS n, sum(usage_nano) AS s FROM generations WHERE organization_id = $org",
        params: { org },
      },
      { timeoutMs: 10_000 },
    );
    expect(r).toEqual({ n: 5_000n, s: BigInt((4_999 * 5_000) / 2) });
  });
});
