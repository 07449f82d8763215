import type { AnalyticsQuery, AnalyticsResult, AnalyticsRow } from "../api/types.ts";
import { call } from "../api/client.ts";

export const runQuery = (q: AnalyticsQuery): Promise<AnalyticsResult> =>
  call("post", "/analytics/query", { body: q }).then((r) => r.data);

export const dateColumn = (granularity: string | undefined) => (granularity ? `date__${granularity}` : null);

/**
 * A time-series result as chart data: x = bucket starts (unix seconds, sorted), one series per
 * value of the first dimension (or one for the metric when there is none), null where a bucket
 * has no row.
 */
export function timeSeries(
  rows: readonly AnalyticsRow[],
  dateKey: string,
  metric: string,
  dimension: string | null,
  maxSeries = 8,
): { x: number[]; series: { label: string; values: (number | null)[] }[] } {
  const times = [...new Set(rows.map((r) => Date.parse(String(r[dateKey])) / 1000))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const groups = new Map<string, (number | null)[]>();
  for (const r of rows) {
    const g = dimension ? String(r[dimension] ?? "(unset)") : metric;
    let values = groups.get(g);
    if (!values) {
      if (groups.size >= maxSeries) continue;
      values = times.map(() => null);
      groups.set(g, values);
    }
    const v = r[metric];
    values[index.get(Date.parse(String(r[dateKey])) / 1000) ?? 0] = typeof v === "number" ? v : null;
  }
  return { x: times, series: [...groups].map(([label, values]) => ({ label, values })) };
}
