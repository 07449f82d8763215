import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compile } from "../../src/analytics/emit/compile.js";
import { buildPlan } from "../../src/analytics/plan/build-plan.js";
import type { Plan } from "../../src/analytics/plan/plan.js";
import { evaluatePlan } from "../../src/analytics/reference/evaluate.js";
import type { CanonicalResult, CanonicalRow } from "../../src/analytics/result/canonical.js";
import { finishEngineRows } from "../../src/analytics/result/finish.js";
import { DomainError } from "../../src/domain/errors.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openChdbActivityStore } from "../../src/stores/clickhouse/chdb-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { BASE, DEFAULT_WS, materialise, queryArb, rowArb } from "./analytics-arbitraries.js";

/**
 * Differential test: random activity (with feedback on some generations) and random valid
 * queries; DuckDB, ClickHouse (in-process,
 * chDB) and the reference evaluator must return the same rows and the same `truncated`. Money
 * and counts exactly; floats (averages, percentiles) within 1e-9 relative, since engines sum and
 * interpolate in their own order. Bounded to stay well under a minute.
 */
const NOW = new Date("2026-11-18T12:00:00.000Z");
const OTHER_ORG = "00000000-0000-4000-8000-0000000000ff";

/** Averages and percentiles of non-integer data may differ in the last bits between engines. */
const inexact = (plan: Plan, alias: string): boolean =>
  plan.metrics.some(
    (m) => `m_${m.def.name}` === alias && m.def.kind === "float" && m.def.measure.kind !== "ratio",
  );

function close(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") {
    return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  }
  return a === b;
}
const sameRow = (a: CanonicalRow, b: CanonicalRow) =>
  Object.keys(b).length === Object.keys(a).length && Object.keys(b).every((k) => close(a[k], b[k]));

/**
 * Rows equal in order; when the first sort key is an inexact float, rows whose key values are
 * within tolerance may come in either order (the plan then has no cut, see below).
 */
function assertSame(plan: Plan, got: CanonicalResult, want: CanonicalResult, engine: string): void {
  const show = (r: CanonicalResult) =>
    JSON.stringify(r, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
  const fail = (why: string) => expect.fail(`${engine}: ${why}\nwant ${show(want)}\ngot  ${show(got)}`);
  if (got.truncated !== want.truncated) fail("truncated differs");
  if (got.rows.length !== want.rows.length) fail("row count differs");
  if (got.rows.every((r, i) => sameRow(r, want.rows[i]!))) return;
  const primary = plan.order[0]!.column;
  if (primary.kind !== "metric" || !inexact(plan, `m_${plan.metrics[primary.index]!.def.name}`))
    fail("rows differ");
  const pending = [...want.rows];
  for (const r of got.rows) {
    const i = pending.findIndex((w) => sameRow(r, w));
    if (i < 0) fail("a row is not in the reference result");
    pending.splice(i, 1);
  }
}

describe("analytics engines agree with the reference evaluator", () => {
  let duck: ActivityStore;
  let ch: ActivityStore;
  beforeAll(async () => {
    duck = await openDuckDbActivityStore({ path: ":memory:" });
    ch = await openChdbActivityStore();
  });
  afterAll(async () => {
    await duck?.close();
    await ch?.close();
  });

  it("sums past the 64-bit range stay exact on every engine (no silent wrap)", async () => {
    // The ledger caps one key's or workspace's money near 9.2e18 nano-USD, but an organization's
    // total spans keys and workspaces, and token counts have no cap (up to 2^53 - 1 per record).
    const org = randomUUID();
    const template = fc.sample(rowArb, { numRuns: 1, seed: 1 })[0]!;
    const big = Array.from({ length: 600 }, () => ({
      ...template,
      otherOrg: false,
      tags: [],
      feedback: [],
      row: {
        ...template.row,
        created_at_ms: BASE,
        tokens_prompt: 2 ** 53 - 1,
        tokens_completion: 2 ** 53 - 1,
        usage_nano: 1_000_000_000_000_000_000n,
        byok_usage_inference_nano: 1_000_000_000_000_000_000n,
      },
    }));
    const { rows, tags } = materialise(big, org, OTHER_ORG);
    await Promise.all([duck.insert(rows, tags), ch.insert(rows, tags)]);
    const ctx = { organizationId: org, defaultWorkspaceId: DEFAULT_WS };
    const plan = buildPlan(
      {
        metrics: ["tokens_total", "tokens_prompt", "total_usage", "credits_usage", "byok_fees"],
        dimensions: ["model"],
        granularity: "day",
        time_range: { start: new Date(BASE).toISOString(), end: new Date(BASE + 86_400_000).toISOString() },
      },
      NOW,
    );
    const want = evaluatePlan(plan, ctx, rows, tags);
    expect(want.rows[0]!.m_total_usage).toBe(1_200_000_000_000_000_000_000n);
    for (const store of [duck, ch]) {
      const engineRows = await store.query(compile(plan, ctx, store.dialect), { timeoutMs: 30_000 });
      assertSame(plan, finishEngineRows(plan, engineRows), want, store.dialect);
    }
  });

  it("random activity × random queries: DuckDB = ClickHouse (chDB) = reference", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowArb, { maxLength: 40 }),
        fc.array(queryArb, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        async (generated, queries, hasDefault) => {
          const org = randomUUID();
          const { rows, tags, feedback } = materialise(generated, org, OTHER_ORG);
          // Other-organization rows get ids unique across runs (they share one organization).
          for (const r of rows) if (r.organization_id === OTHER_ORG) r.id = `${org}-${r.id}`;
          for (const t of tags)
            if (t.organization_id === OTHER_ORG) t.generation_id = `${org}-${t.generation_id}`;
          for (const f of feedback) {
            if (f.organization_id !== OTHER_ORG) continue;
            f.generation_id = `${org}-${f.generation_id}`;
            f.feedback_id = `${org}-${f.feedback_id}`;
          }
          await Promise.all([duck.insert(rows, tags), ch.insert(rows, tags)]);
          await Promise.all([duck.insertFeedback(feedback), ch.insertFeedback(feedback)]);
          const ctx = { organizationId: org, defaultWorkspaceId: hasDefault ? DEFAULT_WS : null };
          for (const req of queries) {
            let plan: Plan;
            try {
              plan = buildPlan(req, NOW);
            } catch (e) {
              if (e instanceof DomainError) continue; // an invalid combination (e.g. a name collision)
              throw e;
            }
            const primary = plan.order[0]!.column;
            if (primary.kind === "metric" && inexact(plan, `m_${plan.metrics[primary.index]!.def.name}`)) {
              // Near-ties of an inexact float may order differently: compare without cuts.
              plan = { ...plan, limit: 10_000, groupLimit: null };
            }
            const want = evaluatePlan(plan, ctx, rows, tags, feedback);
            for (const store of [duck, ch]) {
              const engineRows = await store.query(compile(plan, ctx, store.dialect), { timeoutMs: 30_000 });
              assertSame(plan, finishEngineRows(plan, engineRows), want, store.dialect);
            }
          }
        },
      ),
      { numRuns: 120, interruptAfterTimeLimit: 40_000, markInterruptAsFailure: false },
    );
  }, 60_000);
});
