import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addUsage } from "../../src/domain/usage/ledger.js";
import { ManualClock } from "../../src/lib/clock.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";

/**
 * Usage and limit_remaining across window boundaries: Sunday 2026-11-29 → Monday 2026-11-30 (new
 * day and ISO week) → Tuesday 2026-12-01 (new day and month, same week).
 */
const EVENTS = [
  { at: "2026-11-29T23:00:00.000Z", usage: 1_500_000_000n, byok: 250_000_000n },
  { at: "2026-11-30T09:00:00.000Z", usage: 2_000_000_000n, byok: 500_000_000n },
  { at: "2026-12-01T08:00:00.000Z", usage: 125_000_000n, byok: 1_000_000_000n },
];

type Totals = { day: number; week: number; month: number; all: number };
const CHECKPOINTS: { now: string; usage: Totals; byok: Totals }[] = [
  {
    now: "2026-11-29T23:30:00.000Z",
    usage: { day: 1.5, week: 1.5, month: 1.5, all: 1.5 },
    byok: { day: 0.25, week: 0.25, month: 0.25, all: 0.25 },
  },
  {
    now: "2026-11-30T12:00:00.000Z",
    usage: { day: 2, week: 2, month: 3.5, all: 3.5 },
    byok: { day: 0.5, week: 0.5, month: 0.75, all: 0.75 },
  },
  {
    now: "2026-12-01T12:00:00.000Z",
    usage: { day: 0.125, week: 2.125, month: 0.125, all: 3.625 },
    byok: { day: 1, week: 1.5, month: 1, all: 1.75 },
  },
  {
    // A week later nothing new happened: every window but all-time is empty again.
    now: "2026-12-08T00:00:00.000Z",
    usage: { day: 0, week: 0, month: 0.125, all: 3.625 },
    byok: { day: 0, week: 0, month: 1, all: 1.75 },
  },
];

const WINDOW = { daily: "day", weekly: "week", monthly: "month" } as const;

describe("key usage and limit_remaining", () => {
  let t: TestApp;
  const keys: {
    hash: string;
    key: string;
    limit: number;
    reset: keyof typeof WINDOW | null;
    byok: boolean;
  }[] = [];

  beforeAll(async () => {
    t = await makeTestApp({ clock: new ManualClock(new Date("2026-11-29T00:00:00.000Z")) });
    for (const reset of ["daily", "weekly", "monthly", null] as const) {
      for (const byok of [false, true]) {
        const limit = 3;
        const res = await t.call({
          method: "POST",
          url: "/api/v1/keys",
          payload: { name: `${reset}-${byok}`, limit, limit_reset: reset, include_byok_in_limit: byok },
        });
        expect(res.statusCode).toBe(201);
        keys.push({ hash: res.json().data.hash, key: res.json().key, limit, reset, byok });
      }
    }
  });
  afterAll(() => t.close());

  it("reports every window and the remaining limit as the clock crosses day, week and month", async () => {
    let applied = 0;
    for (const cp of CHECKPOINTS) {
      // Record the events that happened before this checkpoint.
      for (; applied < EVENTS.length && EVENTS[applied]!.at < cp.now; applied++) {
        const e = EVENTS[applied]!;
        for (const k of keys) {
          await t.ctx.store.transaction((trx) =>
            addUsage(trx, {
              organizationId: t.organizationId,
              keyHash: k.hash,
              workspaceId: t.workspaceId,
              at: new Date(e.at),
              usageNano: e.usage,
              byokNano: e.byok,
            }),
          );
        }
      }
      t.clock.set(cp.now);
      const listed = new Map<string, Record<string, unknown>>(
        (await t.call({ method: "GET", url: "/api/v1/keys" }))
          .json()
          .data.map((r: { hash: string }) => [r.hash, r]),
      );
      for (const k of keys) {
        const w = k.reset === null ? "all" : WINDOW[k.reset];
        const used = cp.usage[w] + (k.byok ? cp.byok[w] : 0);
        const expected = {
          usage: cp.usage.all,
          usage_daily: cp.usage.day,
          usage_weekly: cp.usage.week,
          usage_monthly: cp.usage.month,
          byok_usage: cp.byok.all,
          byok_usage_daily: cp.byok.day,
          byok_usage_weekly: cp.byok.week,
          byok_usage_monthly: cp.byok.month,
          limit: k.limit,
          limit_reset: k.reset,
          include_byok_in_limit: k.byok,
          limit_remaining: Math.max(0, k.limit - used),
        };
        const label = `${cp.now} ${k.reset}/${k.byok}`;
        const one = (await t.call({ method: "GET", url: `/api/v1/keys/${k.hash}` })).json().data;
        expect(one, label).toMatchObject(expected);
        expect(listed.get(k.hash), label).toMatchObject(expected);
        const current = (await t.call({ method: "GET", url: "/api/v1/key", auth: k.key })).json().data;
        expect(current, label).toMatchObject(expected);
      }
    }
  });

  it("sums in exact nano-USD (0.1 + 0.2 is 0.3)", async () => {
    const res = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "exact", limit: 0.3 } });
    const hash = res.json().data.hash;
    for (const usageNano of [100_000_000n, 200_000_000n]) {
      await addUsage(t.ctx.store.db, {
        organizationId: t.organizationId,
        keyHash: hash,
        workspaceId: t.workspaceId,
        at: t.clock.now(),
        usageNano,
        byokNano: 0n,
      });
    }
    const data = (await t.call({ method: "GET", url: `/api/v1/keys/${hash}` })).json().data;
    expect(data.usage).toBe(0.3);
    expect(data.limit_remaining).toBe(0);
  });

  it("recomputes limit_remaining when the limit or its window changes", async () => {
    const { hash } = keys.find((k) => k.reset === null && !k.byok)!;
    // All-time usage is 3.625 (> limit 3): clamped at 0.
    const patch = (payload: object) =>
      t
        .call({ method: "PATCH", url: `/api/v1/keys/${hash}`, payload })
        .then((r) => r.json<{ data: { limit_remaining: number | null } }>().data);
    expect((await patch({})).limit_remaining).toBe(0);
    expect((await patch({ limit: 10 })).limit_remaining).toBe(6.375);
    expect((await patch({ include_byok_in_limit: true })).limit_remaining).toBe(4.625);
    expect((await patch({ limit_reset: "monthly" })).limit_remaining).toBe(8.875);
    expect((await patch({ limit: null })).limit_remaining).toBeNull();
  });
});
