/**
 * Usage windows are a pure function of the clock: UTC days, ISO weeks (Monday 00:00 UTC) and UTC
 * calendar months. A window is identified by an integer index, so nothing ever has to "reset".
 */
export type WindowKind = "day" | "week" | "month" | "all";
export type ResetPeriod = "daily" | "weekly" | "monthly";

const DAY_MS = 86_400_000;

export const dayIndex = (t: Date): number => Math.floor(t.getTime() / DAY_MS);
/** 1970-01-01 was a Thursday; shifting by 3 days makes weeks start on Monday. */
export const weekIndex = (t: Date): number => Math.floor((dayIndex(t) + 3) / 7);
export const monthIndex = (t: Date): number => t.getUTCFullYear() * 12 + t.getUTCMonth();

export function windowIndex(kind: WindowKind, t: Date): number {
  switch (kind) {
    case "day":
      return dayIndex(t);
    case "week":
      return weekIndex(t);
    case "month":
      return monthIndex(t);
    case "all":
      return 0;
  }
}

/** Start of the window after the one containing t (when the window "resets"); null for all-time. */
export function windowEnd(kind: WindowKind, t: Date): Date | null {
  switch (kind) {
    case "day":
      return new Date((dayIndex(t) + 1) * DAY_MS);
    case "week":
      return new Date(((weekIndex(t) + 1) * 7 - 3) * DAY_MS);
    case "month":
      return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1));
    case "all":
      return null;
  }
}

/**
 * The UTC days (dayIndex) the window containing t spans, first and last: a window is a run of
 * whole days. All time spans every day.
 */
export function windowDays(kind: WindowKind, t: Date): readonly [number, number] {
  switch (kind) {
    case "day": {
      const d = dayIndex(t);
      return [d, d];
    }
    case "week": {
      const w = weekIndex(t);
      return [w * 7 - 3, w * 7 + 3];
    }
    case "month": {
      const first = Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), 1) / DAY_MS;
      return [first, Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1) / DAY_MS - 1];
    }
    case "all":
      return [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
  }
}

export const RESET_WINDOW: Record<ResetPeriod, WindowKind> = {
  daily: "day",
  weekly: "week",
  monthly: "month",
};
