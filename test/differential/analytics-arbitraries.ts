import fc from "fast-check";
import type { ActivityRow, ClassificationRow } from "../../src/activity/activity-row.js";
import { contextLengthBucket, throughputOf } from "../../src/activity/activity-row.js";
import {
  FEEDBACK_CATEGORIES,
  type FeedbackCategory,
  type FeedbackRow,
} from "../../src/activity/feedback-row.js";
import { DIMENSIONS } from "../../src/analytics/model/dimensions.js";
import { METRICS } from "../../src/analytics/model/metrics.js";
import type { QueryRequest } from "../../src/analytics/plan/query-request.js";

/**
 * Random activity and random valid queries over small value domains, so that groups collide,
 * values repeat, filters hit and miss, unset values and odd strings (quotes, non-BMP characters,
 * U+FFFD, empty strings) are common.
 */
export const WS = ["00000000-0000-4000-8000-0000000000d1", "00000000-0000-4000-8000-0000000000d2"];
export const DEFAULT_WS = "00000000-0000-4000-8000-0000000000dd";
export const CLF = ["11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"];
/** Thursday 2026-10-29: windows cross a month end and week starts. */
export const BASE = Date.parse("2026-10-29T00:00:00.000Z");
const SPAN = 20 * 86_400_000;

const TEXT = ["a", "b", "a'b", "x' OR 1=1 --", "\u{1F600}", "\uFFFD", "é", ""];
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 3 });
const nano = fc.bigInt({ min: 0n, max: 5_000_000_000n });

export const DOMAIN = {
  model: ["m/a", "m/b", "m/c"],
  provider: ["P1", "P2"],
  variant: ["free", "thinking"],
  user: ["u1", "u2", "u'3"],
  app: [1, 2, 3],
  apiKey: [1, 2, 3],
  text: TEXT,
  finish: ["stop", "length", "error"],
  api: ["chat", "responses", "messages", "embeddings"],
  bucket: ["0-1K", "1K-4K", "4K-16K"],
};

const createdAt = fc.oneof(
  fc.integer({ min: 0, max: SPAN / 900_000 - 1 }).map((k) => BASE + k * 900_000),
  fc.integer({ min: 0, max: SPAN - 1 }).map((ms) => BASE + ms),
);

export interface GeneratedRow {
  row: Omit<ActivityRow, "organization_id" | "id">;
  tags: { classifier: string; name: string; value: string }[];
  /** Feedback submissions on this generation (several per category possible). */
  feedback: FeedbackCategory[];
  otherOrg: boolean;
}

export const rowArb: fc.Arbitrary<GeneratedRow> = fc
  .record({
    created_at_ms: createdAt,
    api_key_id: fc.constantFrom(...DOMAIN.apiKey),
    workspace_id: fc.constantFrom(null, DEFAULT_WS, ...WS),
    model: fc.constantFrom(...DOMAIN.model),
    provider: fc.constantFrom(...DOMAIN.provider),
    variant: nullable(fc.constantFrom(...DOMAIN.variant)),
    app_id: nullable(fc.constantFrom(...DOMAIN.app)),
    user_id: nullable(fc.constantFrom(...DOMAIN.user)),
    external_user: nullable(fc.constantFrom(...TEXT)),
    origin: nullable(fc.constantFrom(...TEXT)),
    country: nullable(fc.constantFrom("DE", "US", "a'b")),
    finish_reason: nullable(fc.constantFrom(...DOMAIN.finish)),
    api: nullable(fc.constantFrom(...DOMAIN.api)),
    tokens_prompt: fc.constantFrom(0, 10, 999, 1000, 3999, 5000, 20_000),
    tokens_completion: fc.integer({ min: 0, max: 4000 }),
    tokens_reasoning: fc.integer({ min: 0, max: 100 }),
    tokens_cached: fc.integer({ min: 0, max: 900 }),
    is_byok: fc.boolean(),
    response_cached: fc.boolean(),
    guardrail_invoked: fc.boolean(),
    usage_nano: nano,
    byok_usage_inference_nano: nano,
    usage_upstream_nano: nano,
    usage_data_nano: fc.bigInt({ min: -1_000_000n, max: 1_000_000n }),
    usage_file_nano: nano,
    latency_ms: fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.double({ min: 0, max: 5000, noNaN: true })),
    generation_time_ms: fc.constantFrom(null, 0, 250, 500, 1000, 2000, 1234.5),
    tags: fc.array(
      fc.record({
        classifier: fc.constantFrom(...CLF),
        name: fc.constantFrom("topic", "lang"),
        value: fc.constantFrom("billing", "sales", "en", "x'y"),
      }),
      { maxLength: 3 },
    ),
    // Most generations get none; some get several, of one or more categories.
    feedback: fc.oneof(
      { weight: 3, arbitrary: fc.constant<FeedbackCategory[]>([]) },
      {
        weight: 2,
        arbitrary: fc.array(fc.constantFrom(...FEEDBACK_CATEGORIES), { minLength: 1, maxLength: 4 }),
      },
    ),
    otherOrg: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  })
  .map(({ tags, feedback, otherOrg, ...r }) => ({
    row: {
      ...r,
      api_key_hash: "a".repeat(64),
      context_length_bucket: contextLengthBucket(r.tokens_prompt),
      streamed: false,
      cancelled: false,
      usage_cache_nano: 0n,
      usage_web_nano: 0n,
      usage_upstream_web_nano: 0n,
      usage_upstream_file_nano: 0n,
      usage_web_fetch_nano: 0n,
      usage_upstream_web_fetch_nano: 0n,
      throughput: throughputOf(r.tokens_completion, r.generation_time_ms),
    },
    tags,
    feedback,
    otherOrg,
  }));

/**
 * Rows with ids unique in their organization, their tags and the feedback on them (at the
 * generation's time, submitted a while later), plus one submission on an id that names no
 * generation (it must count nowhere).
 */
export function materialise(
  generated: readonly GeneratedRow[],
  org: string,
  otherOrg: string,
): { rows: ActivityRow[]; tags: ClassificationRow[]; feedback: FeedbackRow[] } {
  const rows: ActivityRow[] = [];
  const tags: ClassificationRow[] = [];
  const feedback: FeedbackRow[] = [];
  const submit = (
    organization_id: string,
    generation_id: string,
    created_at_ms: number,
    category: FeedbackCategory,
  ) =>
    feedback.push({
      organization_id,
      feedback_id: `f${feedback.length}`,
      generation_id,
      created_at_ms,
      category,
      submitted_at_ms: created_at_ms + 60_000,
    });
  generated.forEach((g, i) => {
    const row: ActivityRow = { ...g.row, organization_id: g.otherOrg ? otherOrg : org, id: `g${i}` };
    rows.push(row);
    for (const t of g.tags) {
      tags.push({
        organization_id: row.organization_id,
        generation_id: row.id,
        workspace_id: row.workspace_id,
        created_at_ms: row.created_at_ms,
        classifier_id: t.classifier,
        dimension_name: t.name,
        value: t.value,
      });
    }
    for (const category of g.feedback) submit(row.organization_id, row.id, row.created_at_ms, category);
  });
  submit(org, "no-such-generation", BASE + 86_400_000, "other");
  return { rows, tags, feedback };
}

type Filter = NonNullable<QueryRequest["filters"]>[number];

function valuesFor(dim: string): fc.Arbitrary<string | number> {
  switch (dim) {
    case "model":
      return fc.constantFrom(...DOMAIN.model, "zz");
    case "provider":
      return fc.constantFrom(...DOMAIN.provider);
    case "variant":
      return fc.constantFrom(...DOMAIN.variant);
    case "api_key_id":
      return fc.constantFrom(...DOMAIN.apiKey);
    case "user":
      return fc.constantFrom(...DOMAIN.user);
    case "workspace":
      return fc.constantFrom(DEFAULT_WS, ...WS);
    case "app":
      return fc.constantFrom(...DOMAIN.app);
    case "generation_id":
      return fc.integer({ min: 0, max: 40 }).map((i) => `g${i}`);
    case "country":
      return fc.constantFrom("DE", "US", "a'b", "E");
    case "finish_reason":
      return fc.constantFrom(...DOMAIN.finish);
    case "api":
      return fc.constantFrom(...DOMAIN.api);
    case "context_length_bucket":
      return fc.constantFrom(...DOMAIN.bucket);
    default:
      return fc.constantFrom(...TEXT);
  }
}

const filterArb: fc.Arbitrary<Filter> = fc.constantFrom(...DIMENSIONS).chain((dim) =>
  fc.oneof(
    fc.record({
      field: fc.constant(dim.name),
      operator: fc.constantFrom("eq", "neq", "gt", "gte", "lt", "lte"),
      value: valuesFor(dim.name),
    }),
    fc.record({
      field: fc.constant(dim.name),
      operator: fc.constantFrom("in", "not_in"),
      value: fc.uniqueArray(valuesFor(dim.name), { minLength: 1, maxLength: 3 }),
      include_unset: dim.has_unset ? fc.boolean() : fc.constant(false),
    }),
  ),
);

const iso = (ms: number) => new Date(ms).toISOString();

/** A window inside the data span (some boundaries on exact row timestamps), or a 3-hour one for minutes. */
const windowArb = (minute: boolean) =>
  minute
    ? fc.integer({ min: 0, max: SPAN / 3_600_000 - 3 }).map((h) => ({
        start: iso(BASE + h * 3_600_000),
        end: iso(BASE + (h + 3) * 3_600_000),
      }))
    : fc
        .tuple(fc.integer({ min: -2, max: 21 * 96 }), fc.integer({ min: 1, max: 22 * 96 }))
        .map(([a, len]) => ({ start: iso(BASE + a * 900_000), end: iso(BASE + (a + len) * 900_000) }));

export const queryArb: fc.Arbitrary<QueryRequest> = fc
  .record({
    metrics: fc.uniqueArray(fc.constantFrom(...METRICS.map((m) => m.name)), { minLength: 1, maxLength: 4 }),
    dimensions: fc.uniqueArray(fc.constantFrom(...DIMENSIONS.map((d) => d.name)), { maxLength: 2 }),
    granularity: fc.constantFrom(undefined, undefined, "minute", "hour", "day", "week", "month"),
    filters: fc.array(filterArb, { maxLength: 3 }),
    limit: fc.option(fc.integer({ min: 1, max: 15 }), { nil: undefined }),
    group_limit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    order: fc.option(fc.tuple(fc.nat(5), fc.constantFrom<"asc" | "desc">("asc", "desc")), {
      nil: undefined,
    }),
    classifier: fc.option(
      fc.record({
        id: fc.constantFrom(...CLF),
        names: fc.constantFrom(undefined, ["topic"], ["topic", "lang"], ["lang"]),
        include_nulls: fc.boolean(),
        grouped: fc.boolean(),
        filters: fc.array(
          fc.oneof(
            fc.record({
              field: fc.constantFrom("topic", "lang"),
              operator: fc.constantFrom("eq", "neq"),
              value: fc.constantFrom("billing", "sales", "en"),
            }),
            fc.record({
              field: fc.constantFrom("topic", "lang"),
              operator: fc.constantFrom("in", "not_in"),
              value: fc.uniqueArray(fc.constantFrom("billing", "sales", "en", "x'y"), {
                minLength: 1,
                maxLength: 2,
              }),
            }),
          ),
          { maxLength: 2 },
        ),
      }),
      { nil: undefined, freq: 3 },
    ),
  })
  .chain((q) => windowArb(q.granularity === "minute").map((time_range) => ({ ...q, time_range })))
  .map((q) => {
    const req: QueryRequest = {
      metrics: q.metrics,
      dimensions: q.dimensions,
      filters: q.filters,
      time_range: q.time_range,
      ...(q.granularity ? { granularity: q.granularity } : {}),
      ...(q.limit !== undefined ? { limit: q.limit } : {}),
      ...(q.group_limit !== undefined ? { group_limit: q.group_limit } : {}),
    };
    if (q.order) {
      const fields = [...q.metrics, ...q.dimensions, "request_count", ...(q.granularity ? ["date"] : [])];
      req.order_by = { field: fields[q.order[0] % fields.length]!, direction: q.order[1] };
    }
    if (q.classifier) {
      const c = q.classifier;
      if (c.grouped || c.filters.length === 0) {
        req.classifier_dimensions = {
          classifier_id: c.id,
          ...(c.names ? { dimension_names: c.names } : {}),
          include_nulls: c.include_nulls,
        };
      }
      if (c.filters.length > 0) req.classifier_filters = { classifier_id: c.id, filters: c.filters };
    }
    return req;
  });
