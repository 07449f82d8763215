import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  RESET_WINDOW,
  dayIndex,
  monthIndex,
  weekIndex,
  windowDays,
  windowEnd,
  windowIndex,
} from "../../src/domain/usage/windows.js";

const at = (s: string) => new Date(s);

/** Any instant of 1990-2100. */
const anyTime = fc.date({
  min: new Date("1990-01-01T00:00:00Z"),
  max: new Date("2100-01-01T00:00:00Z"),
  noInvalidDate: true,
});

describe("usage windows", () => {
  it("days are UTC days", () => {
    expect(dayIndex(at("1970-01-01T00:00:00Z"))).toBe(0);
    expect(dayIndex(at("2026-11-18T23:59:59.999Z"))).toBe(dayIndex(at("2026-11-18T00:00:00Z")));
    expect(dayIndex(at("2026-11-19T00:00:00Z"))).toBe(dayIndex(at("2026-11-18T00:00:00Z")) + 1);
    // An offset timestamp belongs to the UTC day it denotes.
    expect(dayIndex(at("2026-11-18T23:30:00-02:00"))).toBe(dayIndex(at("2026-11-19T12:00:00Z")));
    expect(windowEnd("day", at("2026-11-18T13:45:00Z"))).toEqual(at("2026-11-19T00:00:00Z"));
  });

  it("ISO weeks start on Monday 00:00 UTC", () => {
    // Sunday 2026-11-22 23:59:59.999 and Monday 2026-11-23 00:00 are in consecutive weeks.
    const sunday = at("2026-11-22T23:59:59.999Z");
    const monday = at("2026-11-23T00:00:00.000Z");
    expect(weekIndex(monday)).toBe(weekIndex(sunday) + 1);
    // The whole week Monday..Sunday shares one index.
    for (let d = 0; d < 7; d++) {
      expect(weekIndex(new Date(monday.getTime() + d * 86_400_000 + 3_600_000))).toBe(weekIndex(monday));
    }
    expect(windowEnd("week", sunday)).toEqual(monday);
    expect(windowEnd("week", monday)).toEqual(at("2026-11-30T00:00:00Z"));
    expect(windowEnd("week", at("2026-11-25T08:00:00Z"))).toEqual(at("2026-11-30T00:00:00Z"));
    // 1970-01-01 was a Thursday: its week began on Monday 1969-12-29.
    expect(windowEnd("week", at("1970-01-01T00:00:00Z"))).toEqual(at("1970-01-05T00:00:00Z"));
    // A week that spans a year end is one week.
    expect(weekIndex(at("2026-12-31T12:00:00Z"))).toBe(weekIndex(at("2027-01-03T12:00:00Z")));
    expect(weekIndex(at("2027-01-04T00:00:00Z"))).toBe(weekIndex(at("2027-01-03T23:59:59Z")) + 1);
  });

  it("months are UTC calendar months, including month and year ends", () => {
    expect(monthIndex(at("2026-11-30T23:59:59.999Z"))).toBe(monthIndex(at("2026-11-01T00:00:00Z")));
    expect(monthIndex(at("2026-12-01T00:00:00Z"))).toBe(monthIndex(at("2026-11-30T23:59:59.999Z")) + 1);
    expect(windowEnd("month", at("2026-11-18T00:00:00Z"))).toEqual(at("2026-12-01T00:00:00Z"));
    expect(windowEnd("month", at("2026-01-31T12:00:00Z"))).toEqual(at("2026-02-01T00:00:00Z"));
    // Year end: December rolls into January of the next year.
    expect(monthIndex(at("2027-01-01T00:00:00Z"))).toBe(monthIndex(at("2026-12-31T23:59:59.999Z")) + 1);
    expect(windowEnd("month", at("2026-12-31T23:59:59.999Z"))).toEqual(at("2027-01-01T00:00:00Z"));
    expect(windowEnd("day", at("2026-12-31T23:59:59.999Z"))).toEqual(at("2027-01-01T00:00:00Z"));
  });

  it("handles leap days: 29 February 2028 and 2024", () => {
    for (const year of [2024, 2028]) {
      const leap = at(`${year}-02-29T12:00:00Z`);
      expect(leap.getUTCDate()).toBe(29);
      expect(windowEnd("day", leap)).toEqual(at(`${year}-03-01T00:00:00Z`));
      expect(windowEnd("month", leap)).toEqual(at(`${year}-03-01T00:00:00Z`));
      expect(monthIndex(leap)).toBe(monthIndex(at(`${year}-02-01T00:00:00Z`)));
      expect(dayIndex(at(`${year}-03-01T00:00:00Z`))).toBe(dayIndex(at(`${year}-02-28T00:00:00Z`)) + 2);
    }
    // 2028-02-29 is a Tuesday: its week began on Monday 28 February and ends Monday 6 March.
    expect(windowEnd("week", at("2028-02-29T12:00:00Z"))).toEqual(at("2028-03-06T00:00:00Z"));
    // 2024-02-29 is a Thursday: its week ends Monday 4 March.
    expect(windowEnd("week", at("2024-02-29T12:00:00Z"))).toEqual(at("2024-03-04T00:00:00Z"));
    // In a common year, February ends on the 28th.
    expect(windowEnd("month", at("2026-02-28T23:00:00Z"))).toEqual(at("2026-03-01T00:00:00Z"));
  });

  it("all-time is one window that never ends", () => {
    expect(windowIndex("all", at("2026-11-18T00:00:00Z"))).toBe(0);
    expect(windowIndex("all", at("1999-01-01T00:00:00Z"))).toBe(0);
    expect(windowEnd("all", at("2026-11-18T00:00:00Z"))).toBeNull();
  });

  it("maps reset periods to windows", () => {
    expect(RESET_WINDOW).toEqual({ daily: "day", weekly: "week", monthly: "month" });
  });

  it("windowEnd is the first instant of the next window, for any time", () => {
    fc.assert(
      fc.property(anyTime, fc.constantFrom<"day" | "week" | "month">("day", "week", "month"), (t, kind) => {
        const end = windowEnd(kind, t)!;
        expect(end.getTime()).toBeGreaterThan(t.getTime());
        expect(windowIndex(kind, end)).toBe(windowIndex(kind, t) + 1);
        expect(windowIndex(kind, new Date(end.getTime() - 1))).toBe(windowIndex(kind, t));
        // Every window starts at midnight UTC; weeks on Monday, months on the 1st.
        expect(end.getUTCHours() + end.getUTCMinutes() + end.getUTCSeconds() + end.getUTCMilliseconds()).toBe(
          0,
        );
        if (kind === "week") expect(end.getUTCDay()).toBe(1);
        if (kind === "month") expect(end.getUTCDate()).toBe(1);
      }),
      { numRuns: 1000 },
    );
  });

  it("windowDays are the days whose windows are t's: a hold of one of them counts in t's window", () => {
    fc.assert(
      fc.property(anyTime, fc.constantFrom<"day" | "week" | "month">("day", "week", "month"), (t, kind) => {
        const [first, last] = windowDays(kind, t);
        const dayStart = (d: number) => new Date(d * 86_400_000);
        expect(windowIndex(kind, dayStart(first))).toBe(windowIndex(kind, t));
        expect(windowIndex(kind, dayStart(last))).toBe(windowIndex(kind, t));
        expect(windowIndex(kind, dayStart(first - 1))).toBe(windowIndex(kind, t) - 1);
        expect(windowIndex(kind, dayStart(last + 1))).toBe(windowIndex(kind, t) + 1);
      }),
      { numRuns: 1000 },
    );
    // February of a leap year, and a week across a year end.
    expect(
      windowDays("month", at("2028-02-29T12:00:00Z")).map((d) => d - dayIndex(at("2028-02-01T00:00:00Z"))),
    ).toEqual([0, 28]);
    expect(windowDays("week", at("2027-01-01T00:00:00Z"))).toEqual([
      dayIndex(at("2026-12-28T00:00:00Z")),
      dayIndex(at("2027-01-03T00:00:00Z")),
    ]);
    const [first, last] = windowDays("all", at("2026-11-18T00:00:00Z"));
    expect(first).toBeLessThan(dayIndex(at("1970-01-01T00:00:00Z")) - 1e6);
    expect(last).toBeGreaterThan(dayIndex(at("2100-01-01T00:00:00Z")));
  });
});
