import { describe, expect, it } from "vitest";
import { buildPlan } from "../../src/analytics/plan/build-plan.js";
import type { QueryRequest } from "../../src/analytics/plan/query-request.js";
import { evaluatePlan } from "../../src/analytics/reference/evaluate.js";
import { finishEngineRows } from "../../src/analytics/result/finish.js";
import type { ActivityRow, ClassificationRow } from "../../src/activity/activity-row.js";
import type { FeedbackCategory, FeedbackRow } from "../../src/activity/feedback-row.js";
import { CLF, DEFAULT_WS, ORG, gen, tag } from "../helpers/analytics-rows.js";

const NOW = new Date("2026-11-18T12:00:00.000Z");
const CTX = { organizationId: ORG, defaultWorkspaceId: DEFAULT_WS };
const run = (
  req: QueryRequest,
  rows: ActivityRow[],
  tags: ClassificationRow[] = [],
  feedback: FeedbackRow[] = [],
) => evaluatePlan(buildPlan(req, NOW), CTX, rows, tags, feedback);

let feedbackSeq = 0;
/** A feedback submission on a generation, at its time (as the activity store holds it). */
const fb = (g: ActivityRow, category: FeedbackCategory, over: Partial<FeedbackRow> = {}): FeedbackRow => ({
  organization_id: g.organization_id,
  feedback_id: `fb${++feedbackSeq}`,
  generation_id: g.id,
  created_at_ms: g.created_at_ms,
  category,
  submitted_at_ms: g.created_at_ms + 3_600_000,
  ...over,
});

describe("reference evaluator (docs/generation-record.md, hand-computed)", () => {
  it("no rows: one row, counts and sums 0, averages, percentiles and rates null", () => {
    const r = run(
      { metrics: ["request_count", "total_usage", "avg_latency", "p50_latency", "cache_hit_rate"] },
      [],
    );
    expect(r.rows).toEqual([
      {
        m_request_count: 0n,
        m_total_usage: 0n,
        m_avg_latency: null,
        m_p50_latency: null,
        m_cache_hit_rate: null,
      },
    ]);
  });

  it("percentiles interpolate linearly between closest ranks; money is exact", () => {
    const rows = [10, 20, 30, 40].map((l, i) =>
      gen({ latency_ms: l, usage_nano: BigInt(i + 1) * 333_333_333n }),
    );
    const r = run({ metrics: ["p50_latency", "p90_latency", "avg_latency", "credits_usage"] }, rows);
    expect(r.rows[0]).toEqual({
      m_p50_latency: 25,
      m_p90_latency: 37,
      m_avg_latency: 25,
      m_credits_usage: 3_333_333_330n,
    });
  });

  it("usage metrics split by BYOK as activity.md defines", () => {
    const rows = [
      gen({ usage_nano: 100n, is_byok: false }),
      gen({ usage_nano: 7n, byok_usage_inference_nano: 50n, is_byok: true }),
    ];
    const r = run(
      {
        metrics: [
          "total_usage",
          "credits_usage",
          "byok_usage",
          "openrouter_usage",
          "byok_fees",
          "byok_request_count",
        ],
      },
      rows,
    );
    expect(r.rows[0]).toEqual({
      m_total_usage: 157n,
      m_credits_usage: 107n,
      m_byok_usage: 50n,
      m_openrouter_usage: 100n,
      m_byok_fees: 7n,
      m_byok_request_count: 1n,
    });
  });

  it("rates, throughput only where generation_time_ms > 0, blended cost per million tokens", () => {
    const rows = [
      gen({
        tokens_prompt: 1000,
        tokens_cached: 250,
        tokens_completion: 500,
        generation_time_ms: 2000,
        usage_nano: 3_000_000n,
      }),
      gen({ tokens_prompt: 1000, tokens_completion: 500, generation_time_ms: 0, response_cached: true }),
    ];
    const r = run(
      {
        metrics: [
          "cache_hit_rate",
          "response_cached_rate",
          "avg_throughput",
          "blended_cost_per_million_tokens",
        ],
      },
      rows,
    );
    // 0.003 USD over 3000 tokens = 1 USD per million tokens.
    expect(r.rows[0]).toEqual({
      m_cache_hit_rate: 0.125,
      m_response_cached_rate: 0.5,
      m_avg_throughput: 250,
      m_blended_cost_per_million_tokens: 1,
    });
  });

  it("feedback: counted on the group's generations at their time, in all and per category; 0 without any", () => {
    const day = (d: string) => Date.parse(`2026-11-${d}T08:00:00Z`);
    const a = gen({ model: "m/a", created_at_ms: day("16") });
    const b = gen({ model: "m/b", created_at_ms: day("16") });
    const c = gen({ model: "m/a", created_at_ms: day("17") });
    const quiet = gen({ model: "m/c", created_at_ms: day("17") });
    const feedback = [
      fb(a, "latency"),
      fb(a, "latency"),
      fb(a, "billing"),
      fb(b, "other"),
      // Submitted days later: still counted on day 17, its generation's.
      fb(c, "latency", { submitted_at_ms: day("18") }),
      // Another organization's, on a generation id this one also has: never counted.
      fb(a, "latency", { organization_id: "00000000-0000-4000-8000-0000000000ff" }),
      // About an id with no generation: counted nowhere.
      fb(a, "other", { generation_id: "no-such-generation" }),
    ];
    const byModel = run(
      {
        metrics: ["feedback_count", "feedback_latency_count", "request_count"],
        dimensions: ["model"],
        order_by: { field: "model", direction: "asc" },
      },
      [a, b, c, quiet],
      [],
      feedback,
    );
    expect(byModel.rows).toEqual([
      { d_model: "m/a", m_feedback_count: 4n, m_feedback_latency_count: 3n, m_request_count: 2n },
      { d_model: "m/b", m_feedback_count: 1n, m_feedback_latency_count: 0n, m_request_count: 1n },
      { d_model: "m/c", m_feedback_count: 0n, m_feedback_latency_count: 0n, m_request_count: 1n },
    ]);
    const byDay = run(
      { metrics: ["feedback_count", "feedback_billing_count"], granularity: "day" },
      [a, b, c, quiet],
      [],
      feedback,
    );
    expect(byDay.rows).toEqual([
      { t_bucket: day("17") - 8 * 3_600_000, m_feedback_count: 1n, m_feedback_billing_count: 0n },
      { t_bucket: day("16") - 8 * 3_600_000, m_feedback_count: 4n, m_feedback_billing_count: 1n },
    ]);
    // A window without the generations leaves their feedback out, whenever it was submitted.
    const window = run(
      {
        metrics: ["feedback_count"],
        time_range: { start: "2026-11-17T00:00:00Z", end: "2026-11-18T00:00:00Z" },
      },
      [a, b, c, quiet],
      [],
      feedback,
    );
    expect(window.rows).toEqual([{ m_feedback_count: 1n }]);
  });

  it("legacy activity (workspace null) belongs to the default workspace, in groups and filters", () => {
    const other = "00000000-0000-4000-8000-0000000000ee";
    const rows = [
      gen({ workspace_id: null }),
      gen({ workspace_id: DEFAULT_WS }),
      gen({ workspace_id: other }),
    ];
    const byWs = run({ metrics: ["request_count"], dimensions: ["workspace"] }, rows);
    expect(byWs.rows).toEqual([
      { d_workspace: DEFAULT_WS, m_request_count: 2n },
      { d_workspace: other, m_request_count: 1n },
    ]);
    const filtered = run(
      { metrics: ["request_count"], filters: [{ field: "workspace", operator: "eq", value: DEFAULT_WS }] },
      rows,
    );
    expect(filtered.rows[0]!.m_request_count).toBe(2n);
  });

  it("include_unset adds rows without a value; comparisons never match unset rows", () => {
    const rows = [gen({ variant: "free" }), gen({ variant: null }), gen({ variant: "thinking" })];
    const count = (f: NonNullable<QueryRequest["filters"]>[number]) =>
      run({ metrics: ["request_count"], filters: [f] }, rows).rows[0]!.m_request_count;
    expect(count({ field: "variant", operator: "in", value: ["free"] })).toBe(1n);
    expect(count({ field: "variant", operator: "in", value: ["free"], include_unset: true })).toBe(2n);
    expect(count({ field: "variant", operator: "not_in", value: ["free"] })).toBe(1n);
    expect(count({ field: "variant", operator: "not_in", value: ["free"], include_unset: true })).toBe(2n);
    expect(count({ field: "variant", operator: "neq", value: "free" })).toBe(1n);
    expect(count({ field: "variant", operator: "gt", value: "a" })).toBe(2n);
  });

  it("strings order by UTF-8 bytes; nulls last in both directions", () => {
    const rows = [
      gen({ origin: "\u{1F600}" }),
      gen({ origin: "\uFFFD" }),
      gen({ origin: null }),
      gen({ origin: "a" }),
    ];
    const asc = run(
      { metrics: ["request_count"], dimensions: ["origin"], order_by: { field: "origin", direction: "asc" } },
      rows,
    );
    expect(asc.rows.map((r) => r.d_origin)).toEqual(["a", "\uFFFD", "\u{1F600}", null]);
    const desc = run(
      {
        metrics: ["request_count"],
        dimensions: ["origin"],
        order_by: { field: "origin", direction: "desc" },
      },
      rows,
    );
    expect(desc.rows.map((r) => r.d_origin)).toEqual(["\u{1F600}", "\uFFFD", "a", null]);
  });

  it("classifier dimensions: named columns cross-group; include_nulls keeps untagged generations", () => {
    const a = gen();
    const b = gen();
    const c = gen();
    const tags = [
      tag(a, "topic", "billing"),
      tag(a, "lang", "en"),
      tag(b, "topic", "sales"),
      tag(c, "topic", "x", "22222222-2222-4222-8222-222222222222"),
    ];
    const named = run(
      {
        metrics: ["request_count"],
        classifier_dimensions: { classifier_id: CLF, dimension_names: ["topic", "lang"] },
      },
      [a, b, c],
      tags,
    );
    expect(named.rows).toEqual([{ c_0: "billing", c_1: "en", m_request_count: 1n }]);
    const withNulls = run(
      {
        metrics: ["request_count"],
        classifier_dimensions: { classifier_id: CLF, dimension_names: ["topic"], include_nulls: true },
      },
      [a, b, c],
      tags,
    );
    expect(withNulls.rows).toEqual([
      { c_0: "billing", m_request_count: 1n },
      { c_0: "sales", m_request_count: 1n },
      { c_0: null, m_request_count: 1n },
    ]);
    const pairs = run(
      { metrics: ["request_count"], classifier_dimensions: { classifier_id: CLF } },
      [a, b, c],
      tags,
    );
    expect(pairs.rows).toEqual([
      { c_name: "lang", c_value: "en", m_request_count: 1n },
      { c_name: "topic", c_value: "billing", m_request_count: 1n },
      { c_name: "topic", c_value: "sales", m_request_count: 1n },
    ]);
  });

  it("classifier filters: eq/in need a listed value; neq/not_in need the tag without listed values", () => {
    const a = gen();
    const b = gen();
    const c = gen();
    const tags = [tag(a, "topic", "billing"), tag(b, "topic", "sales")];
    const count = (operator: string, value: string | string[]) =>
      run(
        {
          metrics: ["request_count"],
          classifier_filters: { classifier_id: CLF, filters: [{ field: "topic", operator, value }] },
        },
        [a, b, c],
        tags,
      ).rows[0]!.m_request_count;
    expect(count("eq", "billing")).toBe(1n);
    expect(count("neq", "billing")).toBe(1n);
    expect(count("in", ["billing", "sales"])).toBe(2n);
    expect(count("not_in", ["billing", "sales"])).toBe(0n);
  });

  it("group_limit keeps the first n rows of each combination and reports truncation", () => {
    const days = ["2026-11-15", "2026-11-16", "2026-11-17"];
    const rows = days.flatMap((d) =>
      ["m/a", "m/b"].map((model) => gen({ model, created_at_ms: Date.parse(`${d}T08:00:00Z`) })),
    );
    const r = run(
      { metrics: ["request_count"], dimensions: ["model"], granularity: "day", group_limit: 2 },
      rows,
    );
    expect(r.truncated).toBe(true);
    expect(r.rows.map((x) => [x.d_model, new Date(x.t_bucket as number).toISOString().slice(0, 10)])).toEqual(
      [
        ["m/a", "2026-11-17"],
        ["m/b", "2026-11-17"],
        ["m/a", "2026-11-16"],
        ["m/b", "2026-11-16"],
      ],
    );
    const auto = run(
      { metrics: ["request_count"], dimensions: ["model"], granularity: "day", limit: 1 },
      rows,
    );
    expect(auto.rows).toHaveLength(6);
    expect(auto.truncated).toBe(false);
  });

  it("an automatic limit that must cut drops the partly returned time bucket (reference and engine path agree)", () => {
    const rows = ["2026-11-16", "2026-11-17"].flatMap((d) =>
      ["m/a", "m/b", "m/c"].map((model) => gen({ model, created_at_ms: Date.parse(`${d}T08:00:00Z`) })),
    );
    const plan = {
      ...buildPlan({ metrics: ["request_count"], dimensions: ["model"], granularity: "day" }, NOW),
      limit: 4,
    };
    const ref = evaluatePlan(plan, CTX, rows, []);
    expect(ref.rows).toHaveLength(3);
    expect(ref.truncated).toBe(true);
    // The engine path gets limit + 1 ordered rows: feed it the reference's full order.
    const all = evaluatePlan({ ...plan, limit: 100 }, CTX, rows, []).rows;
    const engine = finishEngineRows(plan, all.slice(0, 5));
    expect(engine).toEqual(ref);
  });
});
