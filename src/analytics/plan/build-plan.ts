import { invalid } from "../../domain/errors.js";
import { DIMENSION_BY_NAME, type DimensionDef } from "../model/dimensions.js";
import { GRANULARITIES, GRANULARITY_BY_NAME } from "../model/granularities.js";
import { DAY_MS, LIMITS } from "../model/limits.js";
import { METRIC_BY_NAME } from "../model/metrics.js";
import { planClassifierFilters, planClassifierGrouping } from "./classifier.js";
import { classifierColumnCount } from "./columns.js";
import { planFilters } from "./filters.js";
import { planOrder } from "./order.js";
import type { Plan, PlanMetric } from "./plan.js";
import type { QueryRequest } from "./query-request.js";
import { shown } from "./shown.js";
import { planTimeRange } from "./time-range.js";

function names<T>(field: string, list: readonly string[], lookup: ReadonlyMap<string, T>, what: string): T[] {
  return list.map((n, i) => {
    const def = lookup.get(n);
    if (!def) throw invalid(`${field}[${i}]: unknown ${what} ${shown(n)} (see GET /analytics/meta)`);
    if (list.indexOf(n) !== i) throw invalid(`${field}[${i}]: duplicate ${what} ${shown(n)}`);
    return def;
  });
}

/**
 * Request → validated plan. Every rule of docs/wire-compatibility.md "Analytics limits" and of
 * docs/api-notes.md "Analytics" that JSON schema cannot express; each failure is a 400 naming the
 * field. Pure: `now` is injected.
 * Filter values still hold key hashes; the service resolves them (resolve-filters.ts).
 */
export function buildPlan(req: QueryRequest, now: Date): Plan {
  if (req.metrics.length < 1) throw invalid("metrics: at least 1 item");
  const metricDefs = names("metrics", req.metrics, METRIC_BY_NAME, "metric");
  const dims = req.dimensions ?? [];
  if (dims.length > LIMITS.maxDimensions) throw invalid(`dimensions: at most ${LIMITS.maxDimensions} items`);
  const dimensions: DimensionDef[] = names("dimensions", dims, DIMENSION_BY_NAME, "dimension");
  if ((req.filters?.length ?? 0) > LIMITS.maxFilters)
    throw invalid(`filters: at most ${LIMITS.maxFilters} items`);
  let granularity = null;
  if (req.granularity !== undefined) {
    granularity = GRANULARITY_BY_NAME.get(req.granularity) ?? null;
    if (!granularity)
      throw invalid(`granularity: must be one of ${GRANULARITIES.map((g) => g.name).join(", ")}`);
  }
  const { startMs, endMs } = planTimeRange(req.time_range, now);
  const filters = planFilters(req.filters);

  const metrics: PlanMetric[] = metricDefs.map((def) => ({ def, hidden: false }));
  if (req.order_by?.field === "request_count" && !metricDefs.some((m) => m.name === "request_count")) {
    metrics.push({ def: METRIC_BY_NAME.get("request_count")!, hidden: true });
  }

  const taken = new Set<string>([
    ...metricDefs.map((m) => m.name),
    ...dimensions.map((d) => d.name),
    ...(dimensions.some((d) => d.label === "user") ? ["user_email"] : []),
    ...(granularity ? [`date__${granularity.name}`] : []),
  ]);
  const classifier = planClassifierGrouping(req.classifier_dimensions, taken);
  const classifierFilters = planClassifierFilters(req.classifier_filters);
  if (classifier && classifierFilters && classifier.classifierId !== classifierFilters.classifierId) {
    throw invalid("classifier_filters.classifier_id: must equal classifier_dimensions.classifier_id");
  }

  // Range caps: the tightest limit among what the query uses, named in the message.
  const capped: string[] = [
    ...metricDefs.filter((m) => m.max_range_days < 365).map((m) => m.name),
    ...dimensions.filter((d) => d.max_range_days < 365).map((d) => d.name),
    ...(classifier ? ["classifier_dimensions"] : []),
    ...(classifierFilters ? ["classifier_filters"] : []),
  ];
  const maxDays = capped.length > 0 ? LIMITS.classifierRangeDays : 365;
  if (endMs - startMs > maxDays * DAY_MS) {
    const why = capped.length > 0 ? ` for ${capped.join(", ")}` : "";
    throw invalid(`time_range: exceeds the maximum of ${maxDays} days${why}`);
  }
  if (granularity?.max_range_ms && endMs - startMs > granularity.max_range_ms) {
    throw invalid(`granularity: ${granularity.name} requires a time_range of at most 3 hours`);
  }

  const limit = req.limit ?? LIMITS.defaultLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMITS.maxLimit) {
    throw invalid(`limit: must be an integer from 1 to ${LIMITS.maxLimit}`);
  }
  const groupLimit = req.group_limit;
  if (
    groupLimit !== undefined &&
    (!Number.isInteger(groupLimit) || groupLimit < 1 || groupLimit > LIMITS.maxGroupLimit)
  ) {
    throw invalid(`group_limit: must be an integer from 1 to ${LIMITS.maxGroupLimit}`);
  }
  const shape = { metrics, dimensions, granularity, classifier };
  const order = planOrder(shape, req.order_by, classifierColumnCount(shape));
  const autoLimit = granularity !== null && dimensions.length > 0 && groupLimit === undefined;
  // group_limit only matters when a dimension combination can span several rows.
  const canCut = dimensions.length > 0 && (granularity !== null || classifier !== null);

  return {
    startMs,
    endMs,
    metrics,
    dimensions,
    granularity,
    filters,
    matchesNothing: false,
    classifier,
    classifierFilters,
    order,
    limit: autoLimit ? LIMITS.maxLimit : limit,
    groupLimit: canCut && groupLimit !== undefined ? groupLimit : null,
    autoLimit,
  };
}
