import type { ActivityStore, BoundQuery } from "../../stores/activity-store.js";
import { DIALECTS } from "../emit/compile.js";
import { toBigInt } from "../../lib/money.js";

const DAY_MS = 86_400_000;

/** Usage of one key, one workspace value (null = legacy activity) and one UTC day, from the activity store. */
export interface ActivityDayTotal {
  keyHash: string;
  workspaceId: string | null;
  /** Days since 1970-01-01 (UTC), as windows.ts dayIndex. */
  day: number;
  usage: bigint;
  byok: bigint;
  records: number;
}

/**
 * One bound query per dialect: the organization's activity summed per key, workspace and UTC day.
 * Every ledger window (day, ISO week, month, all time) is a union of days, so these rows are
 * enough to recompute all of them.
 */
export function activityTotalsQuery(dialect: ActivityStore["dialect"], organizationId: string): BoundQuery {
  // Printed by the analytics SQL dialects (placeholders, day buckets, aggregates): no engine names here.
  const d = DIALECTS[dialect];
  const sql = `SELECT api_key_hash, workspace_id, ${d.bucket("day", "created_at")} AS day_ms,
       ${d.sum("usage_nano", null)} AS usage, ${d.sum("byok_usage_inference_nano", null)} AS byok,
       ${d.count(null)} AS records
FROM generations
WHERE organization_id = ${d.param("org", "String")}
GROUP BY api_key_hash, workspace_id, day_ms
ORDER BY api_key_hash, workspace_id, day_ms`;
  return { sql, params: { org: organizationId } };
}

export async function readActivityTotals(
  activity: ActivityStore,
  organizationId: string,
  timeoutMs: number,
): Promise<ActivityDayTotal[]> {
  const rows = await activity.query(activityTotalsQuery(activity.dialect, organizationId), { timeoutMs });
  return rows.map((r) => ({
    keyHash: r.api_key_hash as string,
    workspaceId: (r.workspace_id as string | null) ?? null,
    day: Math.floor(Number(r.day_ms) / DAY_MS),
    usage: toBigInt(r.usage as bigint),
    byok: toBigInt(r.byok as bigint),
    records: Number(r.records),
  }));
}

/** One bound query per dialect: how many feedback submissions the activity store holds for the organization. */
export function activityFeedbackCountQuery(
  dialect: ActivityStore["dialect"],
  organizationId: string,
): BoundQuery {
  const d = DIALECTS[dialect];
  const sql = `SELECT ${d.count(null)} AS n FROM generation_feedback WHERE organization_id = ${d.param("org", "String")}`;
  return { sql, params: { org: organizationId } };
}

export async function readActivityFeedbackCount(
  activity: ActivityStore,
  organizationId: string,
  timeoutMs: number,
): Promise<number> {
  const rows = await activity.query(activityFeedbackCountQuery(activity.dialect, organizationId), {
    timeoutMs,
  });
  return Number(rows[0]?.n ?? 0);
}
