import { performance } from "node:perf_hooks";
import { readActivityVersion } from "../../domain/ingest/repos/activity-version.js";
import { DomainError, invalid } from "../../domain/errors.js";
import type { Clock } from "../../lib/clock.js";
import { ActivityTimeoutError, type ActivityStore, type BoundQuery } from "../../stores/activity-store.js";
import type { RecordStore } from "../../stores/record-store.js";
import { buildClassifierCheck } from "../emit/build-classifier-check.js";
import { compile, DIALECTS } from "../emit/compile.js";
import { printSql } from "../emit/print-sql.js";
import { buildPlan } from "../plan/build-plan.js";
import type { QueryRequest } from "../plan/query-request.js";
import { finishEngineRows } from "../result/finish.js";
import { cacheKey, type AnalyticsCache } from "./cache.js";
import { defaultWorkspaceId } from "./default-workspace.js";
import { loadLabels } from "./labels.js";
import { presentRows, type WireValue } from "./present.js";
import { resolveFilters } from "./resolve-filters.js";

export const TIMEOUT_MESSAGE = "Operation timed out. Please try again later.";

export interface AnalyticsResult {
  data: Record<string, WireValue>[];
  metadata: { query_time_ms: number; row_count: number; truncated: boolean };
  cachedAt?: number;
  warnings?: string[];
}

export interface AnalyticsDeps {
  store: RecordStore;
  activity: ActivityStore;
  clock: Clock;
  cache: AnalyticsCache;
  /** Time limit of one request's engine work; past it the engine query is cancelled (408). */
  timeoutMs: number;
}

/**
 * POST /analytics/query: cache → plan → resolve filter values → compile for the store's dialect →
 * run with a time limit → labels → response rows. The result is cached with the activity version
 * read before the query, so activity ingested meanwhile makes it stale at once.
 */
export async function runAnalyticsQuery(
  deps: AnalyticsDeps,
  organizationId: string,
  body: QueryRequest,
): Promise<AnalyticsResult> {
  const started = performance.now();
  const db = deps.store.db;
  const key = cacheKey(organizationId, body);
  const version = await readActivityVersion(db, organizationId);
  const hit = deps.cache.get(key, version, deps.clock.now().getTime());
  if (hit) return { ...hit.result, cachedAt: hit.cachedAt };

  const draft = buildPlan(body, deps.clock.now());
  const ctx = { organizationId, defaultWorkspaceId: await defaultWorkspaceId(db, organizationId) };
  const { plan, warnings } = await resolveFilters(db, organizationId, draft);
  const deadline = started + deps.timeoutMs;
  const run = async (q: BoundQuery) => {
    try {
      return await deps.activity.query(q, {
        timeoutMs: Math.max(1, Math.floor(deadline - performance.now())),
        organizationId,
      });
    } catch (err) {
      if (err instanceof ActivityTimeoutError) throw new DomainError("timeout", TIMEOUT_MESSAGE);
      throw err;
    }
  };

  const check = buildClassifierCheck(plan, ctx);
  if (check && (await run(printSql(check, DIALECTS[deps.activity.dialect]))).length === 0) {
    const field = plan.classifier ? "classifier_dimensions" : "classifier_filters";
    throw invalid(
      `${field}.classifier_id: no active classifier with this id (it has not tagged any generation ${
        plan.filters.some(
          (f) => f.dimension.name === "workspace" && (f.operator === "eq" || f.operator === "in"),
        )
          ? "on the filtered workspaces"
          : "in this organization"
      })`,
    );
  }

  const result = finishEngineRows(plan, await run(compile(plan, ctx, deps.activity.dialect)));
  const labels = await loadLabels(db, organizationId, plan, result.rows);
  const data = presentRows(plan, result.rows, labels);
  const out: AnalyticsResult = {
    data,
    metadata: {
      query_time_ms: Math.round((performance.now() - started) * 1000) / 1000,
      row_count: data.length,
      truncated: result.truncated,
    },
    ...(warnings.length > 0 ? { warnings } : {}),
  };
  deps.cache.set(key, version, deps.clock.now().getTime(), out);
  return out;
}
