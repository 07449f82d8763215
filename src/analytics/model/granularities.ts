export type GranularityName = "minute" | "hour" | "day" | "week" | "month";

export interface GranularityDef {
  name: GranularityName;
  display_label: string;
  /** Longest time_range this granularity may be used with (minute: 3 hours), or null. */
  max_range_ms: number | null;
}

export const GRANULARITIES: readonly GranularityDef[] = [
  { name: "minute", display_label: "Minute", max_range_ms: 3 * 3_600_000 },
  { name: "hour", display_label: "Hour", max_range_ms: null },
  { name: "day", display_label: "Day", max_range_ms: null },
  { name: "week", display_label: "Week", max_range_ms: null },
  { name: "month", display_label: "Month", max_range_ms: null },
];

export const GRANULARITY_BY_NAME: ReadonlyMap<string, GranularityDef> = new Map(
  GRANULARITIES.map((g) => [g.name, g]),
);

/** Start (epoch ms, UTC) of the bucket holding `ms`. Weeks start on Monday. */
export function bucketStart(name: GranularityName, ms: number): number {
  const t = new Date(ms);
  switch (name) {
    case "minute":
      return Math.floor(ms / 60_000) * 60_000;
    case "hour":
      return Math.floor(ms / 3_600_000) * 3_600_000;
    case "day":
      return Math.floor(ms / 86_400_000) * 86_400_000;
    case "week": {
      const day = Math.floor(ms / 86_400_000) * 86_400_000;
      const sinceMonday = (t.getUTCDay() + 6) % 7;
      return day - sinceMonday * 86_400_000;
    }
    case "month":
      return Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), 1);
  }
}
