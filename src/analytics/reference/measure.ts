import type { ActivityRow } from "../../activity/activity-row.js";
import type { FloatColumn } from "../model/columns.js";
import type { Flag, Measure } from "../model/measures.js";

/** Feedback submissions per generation id, per category. */
export type FeedbackCounts = ReadonlyMap<string, ReadonlyMap<string, number>>;

/** A measure over one group's generations (docs/wire-compatibility.md "Metrics and dimensions"). */
export function evaluateMeasure(
  m: Measure,
  rows: readonly ActivityRow[],
  feedback: FeedbackCounts = new Map(),
): bigint | number | null {
  const where = (f: Flag | undefined) => (f ? rows.filter((r) => r[f.column] === f.value) : rows);
  switch (m.kind) {
    case "count":
      return BigInt(where(m.flag).length);
    case "sum": {
      let total = 0n;
      for (const r of where(m.flag)) for (const c of m.columns) total += BigInt(r[c]);
      return total;
    }
    case "avg": {
      const xs = values(rows, m.column);
      return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
    }
    case "quantile": {
      const xs = values(rows, m.column).sort((a, b) => a - b);
      if (xs.length === 0) return null;
      // Linear interpolation between closest ranks: h = (n - 1) q.
      const h = (xs.length - 1) * m.q;
      const lo = Math.floor(h);
      const hi = Math.min(lo + 1, xs.length - 1);
      return xs[lo]! + (h - lo) * (xs[hi]! - xs[lo]!);
    }
    case "ratio": {
      const num = evaluateMeasure(m.num, rows) as bigint;
      const den = evaluateMeasure(m.den, rows) as bigint;
      return den === 0n ? null : Number(num) / Number(den) / (m.divideBy ?? 1);
    }
    case "feedback": {
      let total = 0n;
      for (const r of rows) {
        for (const [category, n] of feedback.get(r.id) ?? []) {
          if (m.category === null || m.category === category) total += BigInt(n);
        }
      }
      return total;
    }
  }
}

function values(rows: readonly ActivityRow[], column: FloatColumn): number[] {
  const out: number[] = [];
  for (const r of rows) {
    const v = r[column];
    if (v !== null) out.push(v);
  }
  return out;
}
