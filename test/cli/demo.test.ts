import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODELS, WORKSPACES } from "../../src/demo/catalog.js";
import { generateRecords, hourlyCounts, type DemoPlan } from "../../src/demo/generate-records.js";
import { Problems, parseRecords } from "../../src/domain/ingest/records/validate-generations.js";
import { reconcileLedger } from "../../src/analytics/reconcile/reconcile.js";
import { systemClock } from "../../src/lib/clock.js";
import { usdToNano } from "../../src/lib/money.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { gatehouse } from "../helpers/cli.js";

const UNTIL = "2026-11-18T15:30:00Z";
const UNTIL_MS = Date.parse(UNTIL);
const DAY = 86_400_000;

interface DemoSummary {
  organization_id: string;
  management_key: string | null;
  workspaces: number;
  workspaces_created: number;
  keys: number;
  keys_created: number;
  classifier_id: string;
  generations: number;
  accepted: number;
  duplicates: number;
  feedback: number;
  credits_usd: number;
  byok_inference_usd: number;
  period: { start: string; end: string };
}

async function inspect<T>(dir: string, fn: (s: RecordStore, a: ActivityStore) => Promise<T>): Promise<T> {
  const s = await openSqliteStore(join(dir, "gatehouse.sqlite"));
  const a = await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") });
  try {
    return await fn(s, a);
  } finally {
    await a.close();
    await s.close();
  }
}

const q = (a: ActivityStore, sql: string, params: Record<string, string> = {}) =>
  a.query({ sql, params }, { timeoutMs: 10_000 });

describe("gatehouse demo (SQLite + DuckDB)", () => {
  const dirs: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), "gh-demo-"));
    dirs.push(d);
    return d;
  };
  let dir: string;
  let first: DemoSummary;

  beforeAll(async () => {
    dir = fresh();
    const run = await gatehouse(
      ["demo", "--days", "3", "--generations", "2000", "--seed", "7", "--until", UNTIL, "--json"],
      { GATEHOUSE_DATA_DIR: dir },
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    first = JSON.parse(run.stdout) as DemoSummary;
  });
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("creates an organization on a fresh install, with workspaces, ordinary keys and 2,000 generations", async () => {
    expect(first).toMatchObject({
      workspaces: 4,
      workspaces_created: 3,
      keys: 9,
      keys_created: 9,
      generations: 2_000,
      accepted: 2_000,
      duplicates: 0,
      period: { start: "2026-11-15T15:30:00.000Z", end: "2026-11-18T15:30:00.000Z" },
    });
    expect(first.management_key).toMatch(/^sk-gh-v1-[0-9a-f]{64}$/);
    expect(first.credits_usd).toBeGreaterThan(0);
    expect(first.byok_inference_usd).toBeGreaterThan(0);

    await inspect(dir, async (s, a) => {
      const ws = await s.db
        .selectFrom("workspaces")
        .select(["slug", "name"])
        .where("organization_id", "=", first.organization_id)
        .execute();
      expect(ws.map((w) => w.slug).sort()).toEqual(["default", "production", "research", "support"]);
      const keys = await s.db
        .selectFrom("api_keys")
        .select(["name", "is_management", "creator_user_id"])
        .where("organization_id", "=", first.organization_id)
        .where("is_management", "=", 0)
        .execute();
      expect(keys).toHaveLength(9);
      expect(keys.every((k) => k.creator_user_id?.startsWith("user_"))).toBe(true);
      expect((await s.db.selectFrom("user_labels").selectAll().execute()).length).toBeGreaterThan(5);
      expect((await s.db.selectFrom("app_labels").select("title").execute()).map((r) => r.title)).toContain(
        "Support Copilot",
      );

      const [stats] = await q(
        a,
        `SELECT count(*) AS n, count(DISTINCT model) AS models, count(DISTINCT provider) AS providers,
                count(DISTINCT country) AS countries, avg(CASE WHEN is_byok THEN 1 ELSE 0 END) AS byok_share,
                count(*) FILTER (WHERE workspace_id IS NULL) AS legacy,
                count(*) FILTER (WHERE tokens_reasoning > 0) AS reasoning,
                count(*) FILTER (WHERE tokens_cached > 0) AS cached,
                count(*) FILTER (WHERE variant IS NOT NULL) AS variants,
                min(created_at) AS first, max(created_at) AS last
         FROM generations WHERE organization_id = $org`,
        { org: first.organization_id },
      );
      expect(Number(stats!.n)).toBe(2_000);
      expect(Number(stats!.models)).toBeGreaterThanOrEqual(10);
      expect(Number(stats!.providers)).toBeGreaterThanOrEqual(8);
      expect(Number(stats!.countries)).toBeGreaterThanOrEqual(12);
      expect(stats!.byok_share as number).toBeGreaterThan(0.1);
      expect(stats!.byok_share as number).toBeLessThan(0.2);
      for (const k of ["legacy", "reasoning", "cached", "variants"])
        expect(Number(stats![k])).toBeGreaterThan(0);
      expect(Date.parse(stats!.first as string)).toBeGreaterThanOrEqual(UNTIL_MS - 3 * DAY);
      expect(Date.parse(stats!.last as string)).toBeLessThan(UNTIL_MS);

      const tags = await q(
        a,
        `SELECT dimension_name, count(DISTINCT classifier_id) AS classifiers, count(*) AS n
         FROM generation_tags WHERE organization_id = $org GROUP BY dimension_name ORDER BY dimension_name`,
        { org: first.organization_id },
      );
      expect(tags.map((t) => [t.dimension_name, Number(t.classifiers)])).toEqual([
        ["sentiment", 1],
        ["topic", 1],
      ]);

      // Feedback on about 1 % of the generations (a fifth of the failed ones), in both stores.
      expect(first.feedback).toBeGreaterThanOrEqual(8);
      expect(first.feedback).toBeLessThan(120);
      const stored = await s.db
        .selectFrom("generation_feedback")
        .select(["generation_id", "category", "key_hash", "created_at"])
        .where("organization_id", "=", first.organization_id)
        .execute();
      expect(stored).toHaveLength(first.feedback);
      expect(await s.db.selectFrom("feedback_activity_queue").selectAll().execute()).toEqual([]);
      const onGenerations = await q(
        a,
        `SELECT f.category, g.api_key_hash, g.finish_reason, f.submitted_at, g.created_at
         FROM generation_feedback f JOIN generations g ON g.id = f.generation_id
         WHERE f.organization_id = $org`,
        { org: first.organization_id },
      );
      expect(onGenerations).toHaveLength(first.feedback);
      expect(new Set(onGenerations.map((r) => r.category)).size).toBeGreaterThanOrEqual(3);
      for (const r of onGenerations) {
        if (r.finish_reason === "error") expect(r.category).toBe("api_error");
        expect(Date.parse(r.submitted_at as string)).toBeGreaterThan(Date.parse(r.created_at as string));
      }
      const byGeneration = new Map(stored.map((f) => [f.generation_id, f.key_hash]));
      const keyOf = await q(
        a,
        `SELECT id, api_key_hash FROM generations WHERE id IN (SELECT generation_id FROM generation_feedback)`,
      );
      for (const g of keyOf) expect(byGeneration.get(g.id as string)).toBe(g.api_key_hash);

      // Ledger and activity agree, window by window, and hold the same feedback.
      const report = await reconcileLedger(
        { store: s, activity: a, clock: systemClock },
        first.organization_id,
      );
      expect(report.feedback).toEqual({ stored: first.feedback, activity: first.feedback, queued: 0 });
      expect(report.inSync).toBe(true);
    });
  });

  it("running it again with the same seed adds nothing and reuses the workspaces and keys", async () => {
    const run = await gatehouse(
      ["demo", "--days", "3", "--generations", "2000", "--seed", "7", "--until", UNTIL, "--json"],
      { GATEHOUSE_DATA_DIR: dir },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      organization_id: first.organization_id,
      management_key: null,
      workspaces_created: 0,
      keys_created: 0,
      accepted: 0,
      duplicates: 2_000,
      feedback: 0,
    });
    const count = await inspect(dir, async (s) =>
      s.db
        .selectFrom("generation_feedback")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow(),
    );
    expect(Number(count.n)).toBe(first.feedback);
  });

  it("is deterministic for a seed: another install gets the same records, prints a summary and curl examples", async () => {
    const other = fresh();
    const run = await gatehouse(
      ["demo", "--days", "3", "--generations", "2000", "--seed", "7", "--until", UNTIL],
      { GATEHOUSE_DATA_DIR: other, PORT: "9123" },
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("There was no organization: created one.");
    expect(run.stdout).toMatch(/generations:\s+2,000 accepted, 0 duplicates \(seed 7\)/);
    expect(run.stdout.match(/curl -s http:\/\/127\.0\.0\.1:9123\/api\/v1\/analytics\/query/g)).toHaveLength(
      3,
    );
    expect(run.stdout).toContain(`"classifier_id":"${first.classifier_id}"`);

    const perModel = (d: string) =>
      inspect(d, (_s, a) =>
        q(
          a,
          `SELECT id, model, provider, created_at, usage_nano, byok_usage_inference_nano, tokens_prompt
           FROM generations ORDER BY id`,
        ),
      );
    expect(await perModel(other)).toEqual(await perModel(dir));
    const feedbackOf = (d: string) =>
      inspect(d, (s) =>
        s.db
          .selectFrom("generation_feedback")
          .select(["id", "category", "created_at"])
          .orderBy("id")
          .execute(),
      );
    expect(await feedbackOf(other)).toEqual(await feedbackOf(dir));

    const differentSeed = fresh();
    const run8 = await gatehouse(
      ["demo", "--days", "3", "--generations", "300", "--seed", "8", "--until", UNTIL, "--json"],
      { GATEHOUSE_DATA_DIR: differentSeed },
    );
    expect(JSON.parse(run8.stdout)).toMatchObject({ accepted: 300 });
  });

  it("refuses bad options with exit code 2", async () => {
    const env = { GATEHOUSE_DATA_DIR: dir };
    const [days, gens, until, future] = await Promise.all([
      gatehouse(["demo", "--days", "0"], env),
      gatehouse(["demo", "--generations", "abc"], env),
      gatehouse(["demo", "--until", "2026-11-18T15:30Z"], env),
      gatehouse(["demo", "--until", "2999-01-01T00:00:00Z"], env),
    ]);
    expect(days.stderr).toContain("--days: must be an integer from 1 to 365");
    expect(gens.stderr).toContain("--generations: must be an integer from 1 to 10,000,000");
    expect(until.stderr).toContain("--until: must be an RFC 3339 timestamp with seconds");
    expect(future.stderr).toContain("--until: must not be in the future");
    for (const r of [days, gens, until, future]) expect(r).toMatchObject({ code: 2, stdout: "" });
  });

  it("refuses a period starting before 2000 (ingest would) before creating anything", async () => {
    const empty = fresh();
    const env = { GATEHOUSE_DATA_DIR: empty };
    const run = await gatehouse(["demo", "--until", "2000-01-03T00:00:00Z", "--days", "3"], env);
    expect(run).toMatchObject({ code: 2, stdout: "" });
    expect(run.stderr).toBe(
      "gatehouse: --until: the period (--days 3 before it) must not start before 2000-01-01T00:00:00Z\n",
    );
    const orgs = await gatehouse(["org", "list", "--json"], env);
    expect(orgs).toMatchObject({ code: 0, stdout: "[]\n" });
  });
});

describe("demo generator (in-process)", () => {
  const plan: DemoPlan = {
    classifierId: "0c1a55f1-0000-4000-8000-000000000001",
    workspaces: WORKSPACES.map((spec, i) => ({
      id: `00000000-0000-4000-8000-00000000000${i}`,
      isDefault: spec.slug === null,
      spec,
      keys: spec.keys.map((k, j) => ({ hash: `${i}${j}`.padEnd(64, "a"), spec: k })),
    })),
  };
  const opts = { seed: 11, days: 30, count: 10_000, untilMs: UNTIL_MS };

  it("spreads exactly `count` records over the period's hours, fewer at night and on weekends", () => {
    const hours = hourlyCounts(opts);
    expect(hours.reduce((a, h) => a + h.count, 0)).toBe(10_000);
    expect(hours[0]!.startMs).toBe(UNTIL_MS - 30 * DAY);
    expect(hours[hours.length - 1]!.endMs).toBe(UNTIL_MS);
    const byHour = (h: number) =>
      hours.filter((x) => new Date(x.startMs).getUTCHours() === h).reduce((a, x) => a + x.count, 0);
    expect(byHour(16)).toBeGreaterThan(2 * byHour(3));
    const weekday = (d: number) => [0, 6].includes(new Date(d).getUTCDay());
    const avg = (xs: { count: number }[]) => xs.reduce((a, x) => a + x.count, 0) / xs.length;
    expect(avg(hours.filter((h) => weekday(h.startMs)))).toBeLessThan(
      0.6 * avg(hours.filter((h) => !weekday(h.startMs))),
    );
  });

  it("yields valid wire records in time order, deterministically, with usage computed from tokens and prices", () => {
    const recs = [...generateRecords(plan, opts)];
    expect(recs).toHaveLength(10_000);
    expect(JSON.stringify([...generateRecords(plan, opts)].slice(0, 50))).toBe(
      JSON.stringify(recs.slice(0, 50)),
    );
    expect(JSON.stringify([...generateRecords(plan, { ...opts, seed: 12 })].slice(0, 5))).not.toBe(
      JSON.stringify(recs.slice(0, 5)),
    );

    const problems = new Problems();
    const parsed = parseRecords(recs, UNTIL_MS, problems);
    expect(problems.sorted()).toEqual([]);
    expect(parsed).toHaveLength(10_000);
    for (let i = 1; i < parsed.length; i++) {
      expect(parsed[i]!.createdAtMs).toBeGreaterThanOrEqual(parsed[i - 1]!.createdAtMs);
    }
    expect(new Set(parsed.map((r) => r.id)).size).toBe(10_000);

    const prices = new Map(MODELS.map((m) => [m.slug, m]));
    let checked = 0;
    for (const r of parsed) {
      const m = prices.get(r.model)!;
      expect(m.providers.map(([p]) => p)).toContain(r.provider);
      expect(r.tokensReasoning).toBeLessThanOrEqual(r.tokensCompletion);
      expect(r.tokensCached).toBeLessThanOrEqual(r.tokensPrompt);
      if (r.variant === "free" || r.responseCached || r.finishReason === "error") {
        expect(r.usageUpstreamNano).toBe(0n);
        continue;
      }
      // Inference cost at list prices, rounded to the nano-dollar.
      const perM = (usd: number, tokens: number) => (BigInt(tokens) * usdToNano(usd) + 500_000n) / 1_000_000n;
      const cache = m.cacheRead === null ? 0n : perM(m.cacheRead, r.tokensCached);
      const inference =
        perM(m.input, r.tokensPrompt - r.tokensCached) + perM(m.output, r.tokensCompletion) + cache;
      // perM rounds each part the same way the generator does (input and output together): allow 1 nano.
      expect(r.usageUpstreamNano - inference).toBeGreaterThanOrEqual(-1n);
      expect(r.usageUpstreamNano - inference).toBeLessThanOrEqual(1n);
      if (r.isByok) {
        expect(r.byokUsageInferenceNano).toBe(r.usageUpstreamNano);
        // The platform fee (5 %) plus web search, never the inference cost itself.
        expect(r.usageNano - r.usageWebNano).toBe((r.usageUpstreamNano * 50_000n + 500_000n) / 1_000_000n);
      } else {
        expect(r.byokUsageInferenceNano).toBe(0n);
        expect(r.usageNano).toBe(r.usageUpstreamNano + r.usageWebNano + r.usageDataNano);
      }
      checked += 1;
    }
    expect(checked).toBeGreaterThan(7_500);
    const share = (f: (r: (typeof parsed)[number]) => boolean) => parsed.filter(f).length / parsed.length;
    expect(share((r) => r.isByok)).toBeGreaterThan(0.12);
    expect(share((r) => r.isByok)).toBeLessThan(0.18);
    expect(share((r) => r.finishReason === "stop")).toBeGreaterThan(0.7);
    expect(share((r) => r.classifications.length === 2)).toBeGreaterThan(0.6);
    expect(share((r) => r.usageDataNano < 0n)).toBeGreaterThan(0);
  });
});
