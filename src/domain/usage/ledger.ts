import type { Db } from "../../stores/record-store.js";
import { toBigInt } from "../../lib/money.js";
import { windowIndex, type WindowKind } from "./windows.js";

/**
 * The usage ledger: nano-USD counters per (scope, id, window kind, window index), credits and BYOK
 * apart. Ingest adds to it once per accepted generation, in the transaction that records the
 * generation's id; reads take the windows that contain "now".
 */
export type LedgerScope = "key" | "workspace";

export interface Totals {
  usage: bigint;
  byok: bigint;
}

export type WindowTotals = Record<WindowKind, Totals>;

const KINDS: WindowKind[] = ["day", "week", "month", "all"];

export const zeroTotals = (): WindowTotals => ({
  day: { usage: 0n, byok: 0n },
  week: { usage: 0n, byok: 0n },
  month: { usage: 0n, byok: 0n },
  all: { usage: 0n, byok: 0n },
});

/** Current-window totals for each id (ids without activity get zeros). */
export async function readUsage(
  db: Db,
  scope: LedgerScope,
  ids: readonly string[],
  now: Date,
): Promise<Map<string, WindowTotals>> {
  const out = new Map<string, WindowTotals>(ids.map((id) => [id, zeroTotals()]));
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom("usage_counters")
    .select(["scope_id", "window", "usage_nano", "byok_nano"])
    .where("scope", "=", scope)
    .where("scope_id", "in", [...new Set(ids)])
    .where((eb) =>
      eb.or(KINDS.map((k) => eb.and([eb("window", "=", k), eb("window_index", "=", windowIndex(k, now))]))),
    )
    .execute();
  for (const r of rows) {
    const t = out.get(r.scope_id);
    if (t) t[r.window as WindowKind] = { usage: toBigInt(r.usage_nano), byok: toBigInt(r.byok_nano) };
  }
  return out;
}

export interface UsageEntry {
  organizationId: string;
  keyHash: string;
  workspaceId: string;
  at: Date;
  usageNano: bigint;
  byokNano: bigint;
}

/** Adds one generation's cost to every window of its key and its workspace. Call inside a transaction. */
export async function addUsage(db: Db, e: UsageEntry): Promise<void> {
  const rows = (["key", "workspace"] as const).flatMap((scope) =>
    KINDS.map((k) => ({
      scope,
      scope_id: scope === "key" ? e.keyHash : e.workspaceId,
      window: k,
      window_index: windowIndex(k, e.at),
      organization_id: e.organizationId,
      usage_nano: e.usageNano,
      byok_nano: e.byokNano,
    })),
  );
  await db
    .insertInto("usage_counters")
    .values(rows)
    .onConflict((oc) =>
      oc.columns(["scope", "scope_id", "window", "window_index"]).doUpdateSet((eb) => ({
        usage_nano: eb("usage_counters.usage_nano", "+", eb.ref("excluded.usage_nano")),
        byok_nano: eb("usage_counters.byok_nano", "+", eb.ref("excluded.byok_nano")),
      })),
    )
    .execute();
}

/**
 * addUsage for many generations at once, with the same result: entries are summed per (scope, id,
 * window, window index) first, then written as one multi-row upsert per chunk, so a batch of
 * thousands of generations costs a handful of statements. Call inside a transaction.
 */
export async function addUsageBatch(db: Db, entries: readonly UsageEntry[]): Promise<void> {
  // First per (key, workspace, UTC day): every window kind is a function of the day.
  const DAY_MS = 86_400_000;
  const perDay = new Map<string, UsageEntry>();
  for (const e of entries) {
    const day = Math.floor(e.at.getTime() / DAY_MS);
    const id = `${e.keyHash}\u0000${e.workspaceId}\u0000${day}`;
    const prev = perDay.get(id);
    if (prev) {
      prev.usageNano += e.usageNano;
      prev.byokNano += e.byokNano;
    } else perDay.set(id, { ...e, at: new Date(day * DAY_MS) });
  }
  const sums = new Map<
    string,
    {
      scope: LedgerScope;
      scope_id: string;
      window: WindowKind;
      window_index: number;
      organization_id: string;
      usage_nano: bigint;
      byok_nano: bigint;
    }
  >();
  for (const e of perDay.values()) {
    for (const scope of ["key", "workspace"] as const) {
      const scopeId = scope === "key" ? e.keyHash : e.workspaceId;
      for (const k of KINDS) {
        const index = windowIndex(k, e.at);
        const id = `${scope}\u0000${scopeId}\u0000${k}\u0000${index}`;
        const row = sums.get(id);
        if (row) {
          row.usage_nano += e.usageNano;
          row.byok_nano += e.byokNano;
        } else {
          sums.set(id, {
            scope,
            scope_id: scopeId,
            window: k,
            window_index: index,
            organization_id: e.organizationId,
            usage_nano: e.usageNano,
            byok_nano: e.byokNano,
          });
        }
      }
    }
  }
  const rows = [...sums.values()];
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto("usage_counters")
      .values(rows.slice(i, i + 500))
      .onConflict((oc) =>
        oc.columns(["scope", "scope_id", "window", "window_index"]).doUpdateSet((eb) => ({
          usage_nano: eb("usage_counters.usage_nano", "+", eb.ref("excluded.usage_nano")),
          byok_nano: eb("usage_counters.byok_nano", "+", eb.ref("excluded.byok_nano")),
        })),
      )
      .execute();
  }
}
