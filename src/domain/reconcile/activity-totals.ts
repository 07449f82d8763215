import type { ActivityStore, BoundQuery } from "../../stores/activity-store.js";
import { toBigInt } from "../../lib/money.js";

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
  const sql =
    dialect === "duckdb"
      ? `SELECT api_key_hash, workspace_id, epoch_ms(created_at) // 86400000 AS day,
       sum(usage_nano) AS usage, sum(byok_usage_inference_nano) AS byok, count(*) AS records
FROM generations
WHERE organization_id = $org
GROUP BY api_key_hash, workspace_id, day
ORDER BY api_key_hash, workspace_id, day`
      : `SELECT api_key_hash, workspace_id, intDiv(toUnixTimestamp64Milli(created_at), 86400000) AS day,
       sum(usage_nano) AS usage, sum(byok_usage_inference_nano) AS byok, count() AS records
FROM generations
WHERE organization_id = {org:String}
GROUP BY api_key_hash, workspace_id, day
ORDER BY api_key_hash, workspace_id, day`;
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
    day: Number(r.day),
    usage: toBigInt(r.usage as bigint),
    byok: toBigInt(r.byok as bigint),
    records: Number(r.records),
  }));
}
