import type { ActivityRow, ClassificationRow } from "../../activity/activity-row.js";
import type { FeedbackRow } from "../../activity/feedback-row.js";
import type { DimensionDef } from "../model/dimensions.js";
import { bucketStart } from "../model/granularities.js";
import type { CompileContext } from "../emit/build-filters.js";
import { aliasOf, classifierColumnCount, planColumns } from "../plan/columns.js";
import type { Plan, PlanFilter } from "../plan/plan.js";
import type { CanonicalResult, CanonicalRow, CanonicalValue } from "../result/canonical.js";
import { compareValues } from "./compare.js";
import { evaluateMeasure, type FeedbackCounts } from "./measure.js";

/**
 * The reference evaluator: the plan's meaning over plain arrays, written from docs/wire-compatibility.md
 * "Metrics and dimensions" and docs/api-notes.md "Analytics", without SQL. Differential tests hold every
 * engine to it.
 */
export function evaluatePlan(
  plan: Plan,
  ctx: CompileContext,
  generations: readonly ActivityRow[],
  tags: readonly ClassificationRow[],
  feedback: readonly FeedbackRow[] = [],
): CanonicalResult {
  const value = (d: DimensionDef, r: ActivityRow): string | number | null => {
    const v = r[d.column];
    return v === null && d.null_is_default_workspace ? ctx.defaultWorkspaceId : v;
  };
  const tagsOf = classifierTags(plan, ctx, tags);
  const feedbackOf = feedbackCounts(plan, ctx, feedback);

  const selected = generations.filter(
    (r) =>
      !plan.matchesNothing &&
      r.organization_id === ctx.organizationId &&
      r.created_at_ms >= plan.startMs &&
      r.created_at_ms < plan.endMs &&
      plan.filters.every((f) => matches(f, value(f.dimension, r))) &&
      (plan.classifierFilters?.filters ?? []).every((f) => {
        const vs = tagsOf.get(r.id)?.get(f.name);
        if (!vs) return false;
        const listed = [...vs].some((v) => f.values.includes(v));
        return f.operator === "eq" || f.operator === "in" ? listed : !listed;
      }),
  );

  // Group key columns per generation; classifier grouping may give a generation several keys.
  const groups = new Map<string, { key: CanonicalValue[]; rows: ActivityRow[] }>();
  for (const r of selected) {
    const base: CanonicalValue[] = [
      ...plan.dimensions.map((d) => value(d, r)),
      ...(plan.granularity ? [bucketStart(plan.granularity.name, r.created_at_ms)] : []),
    ];
    for (const clf of classifierKeys(plan, tagsOf.get(r.id))) {
      const key = [...base, ...clf];
      const k = JSON.stringify(key);
      let g = groups.get(k);
      if (!g) groups.set(k, (g = { key, rows: [] }));
      g.rows.push(r);
    }
  }
  const keyCount = plan.dimensions.length + (plan.granularity ? 1 : 0) + classifierColumnCount(plan);
  // An aggregate without grouping answers one row even over nothing (counts 0, averages null).
  if (keyCount === 0 && groups.size === 0) groups.set("[]", { key: [], rows: [] });

  const columns = planColumns(plan);
  let rows: CanonicalRow[] = [...groups.values()].map((g) => {
    const row: CanonicalRow = {};
    columns.forEach((c, i) => {
      row[c.alias] =
        c.ref.kind === "metric"
          ? evaluateMeasure(plan.metrics[c.ref.index]!.def.measure, g.rows, feedbackOf)
          : g.key[i]!;
    });
    return row;
  });

  const keys = plan.order.map((k) => ({
    alias: aliasOf(plan, k.column),
    sign: k.direction === "asc" ? 1 : -1,
  }));
  rows.sort((a, b) => {
    for (const k of keys) {
      const x = a[k.alias]!;
      const y = b[k.alias]!;
      if (x === null || y === null) {
        if (x !== y) return x === null ? 1 : -1; // NULLS LAST in both directions
        continue;
      }
      const c = compareValues(x, y);
      if (c !== 0) return c * k.sign;
    }
    return 0;
  });

  let truncated = false;
  if (plan.groupLimit !== null) {
    const seen = new Map<string, number>();
    const dimAliases = plan.dimensions.map((_, index) => aliasOf(plan, { kind: "dimension", index }));
    rows = rows.filter((r) => {
      const k = JSON.stringify(dimAliases.map((a) => String(r[a])));
      const n = (seen.get(k) ?? 0) + 1;
      seen.set(k, n);
      return n <= plan.groupLimit!;
    });
    truncated = [...seen.values()].some((n) => n > plan.groupLimit!);
  }
  if (rows.length > plan.limit) {
    truncated = true;
    let cut = plan.limit;
    if (plan.autoLimit && plan.order[0]?.column.kind === "time") {
      // Keep time buckets whole: step back to the first row of the bucket that straddles the cut.
      const t = aliasOf(plan, { kind: "time" });
      while (cut > 0 && rows[cut - 1]![t] === rows[plan.limit]![t]) cut -= 1;
      if (cut === 0) cut = plan.limit;
    }
    rows = rows.slice(0, cut);
  }
  return { rows, truncated };
}

function matches(f: PlanFilter, v: string | number | null): boolean {
  const listed = () => v !== null && f.values.includes(v);
  switch (f.operator) {
    case "in":
      return listed() || (f.includeUnset && v === null);
    case "not_in":
      return (v !== null && !listed()) || (f.includeUnset && v === null);
    default: {
      if (v === null) return false;
      const c = compareValues(v, f.values[0]!);
      const ops = { eq: c === 0, neq: c !== 0, gt: c > 0, gte: c >= 0, lt: c < 0, lte: c <= 0 };
      return ops[f.operator];
    }
  }
}

/**
 * generation id → category → submissions: the organization's feedback at its generation's time
 * in the window (each submission counts once, on the generation it is about).
 */
function feedbackCounts(plan: Plan, ctx: CompileContext, feedback: readonly FeedbackRow[]): FeedbackCounts {
  const out = new Map<string, Map<string, number>>();
  for (const f of feedback) {
    if (f.organization_id !== ctx.organizationId) continue;
    if (f.created_at_ms < plan.startMs || f.created_at_ms >= plan.endMs) continue;
    let byCategory = out.get(f.generation_id);
    if (!byCategory) out.set(f.generation_id, (byCategory = new Map<string, number>()));
    byCategory.set(f.category, (byCategory.get(f.category) ?? 0) + 1);
  }
  return out;
}

/** generation id → dimension_name → distinct values, for the plan's classifier (one id per query). */
function classifierTags(plan: Plan, ctx: CompileContext, tags: readonly ClassificationRow[]) {
  const id = plan.classifier?.classifierId ?? plan.classifierFilters?.classifierId;
  const out = new Map<string, Map<string, Set<string>>>();
  for (const t of tags) {
    if (t.organization_id !== ctx.organizationId || t.classifier_id !== id) continue;
    if (t.created_at_ms < plan.startMs || t.created_at_ms >= plan.endMs) continue;
    let byName = out.get(t.generation_id);
    if (!byName) out.set(t.generation_id, (byName = new Map<string, Set<string>>()));
    let vs = byName.get(t.dimension_name);
    if (!vs) byName.set(t.dimension_name, (vs = new Set<string>()));
    vs.add(t.value);
  }
  return out;
}

/** The classifier columns a generation contributes: a cross product of its tag values. */
function classifierKeys(plan: Plan, byName: Map<string, Set<string>> | undefined): CanonicalValue[][] {
  const c = plan.classifier;
  if (!c) return [[]];
  if (!c.names) {
    const pairs = [...(byName ?? new Map<string, Set<string>>())].flatMap(([n, vs]) =>
      [...vs].map((v) => [n, v]),
    );
    return pairs.length > 0 ? pairs : c.includeNulls ? [[null, null]] : [];
  }
  let keys: CanonicalValue[][] = [[]];
  for (const name of c.names) {
    const vs = [...(byName?.get(name) ?? [])];
    const options: CanonicalValue[] = vs.length > 0 ? vs : c.includeNulls ? [null] : [];
    keys = keys.flatMap((k) => options.map((o) => [...k, o]));
  }
  return keys;
}
