import { invalid } from "../errors.js";
import { nanoToUsd } from "../../lib/money.js";
import { BUDGET_INTERVALS, intervalRank, type BudgetInterval } from "./budget-intervals.js";

/**
 * Checks that limits strictly decrease as the interval narrows (lifetime > monthly > weekly >
 * daily) over every pair of the budgets that exist after a change, not only neighbours. A breach
 * is 400 naming the conflicting interval and its limit. For the interval just changed, the
 * conflict named is the tightest bound: the largest narrower limit it must exceed, or the smallest
 * wider limit it must stay below.
 */
export function checkBudgetOrdering(
  limits: ReadonlyMap<BudgetInterval, bigint>,
  changed: BudgetInterval,
): void {
  const present = BUDGET_INTERVALS.filter((i) => limits.has(i));
  const breaches: { narrow: BudgetInterval; wide: BudgetInterval }[] = [];
  for (const narrow of present) {
    for (const wide of present) {
      if (intervalRank(narrow) < intervalRank(wide) && limits.get(narrow)! >= limits.get(wide)!) {
        breaches.push({ narrow, wide });
      }
    }
  }
  if (breaches.length === 0) return;
  const lower = breaches.filter((b) => b.wide === changed).map((b) => b.narrow);
  const upper = breaches.filter((b) => b.narrow === changed).map((b) => b.wide);
  let subject: BudgetInterval;
  let other: BudgetInterval;
  let relation: string;
  if (upper.length > 0) {
    subject = changed;
    other = upper.reduce((a, b) => (limits.get(b)! < limits.get(a)! ? b : a));
    relation = "less than";
  } else if (lower.length > 0) {
    subject = changed;
    other = lower.reduce((a, b) => (limits.get(b)! > limits.get(a)! ? b : a));
    relation = "greater than";
  } else {
    // Only reachable if stored budgets were already out of order.
    const first = breaches[0]!;
    [subject, other, relation] = [first.narrow, first.wide, "less than"];
  }
  const otherUsd = nanoToUsd(limits.get(other)!);
  throw invalid(
    `limit_usd: the ${subject} budget must be ${relation} the ${other} budget (${otherUsd} USD); ` +
      "limits must strictly decrease: lifetime > monthly > weekly > daily",
    { conflicting_interval: other, conflicting_limit_usd: otherUsd },
  );
}
