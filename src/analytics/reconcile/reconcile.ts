import type { Clock } from "../../lib/clock.js";
import { keysOfOrganization } from "../../domain/keys/key-repo.js";
import {
  activityDefaultWorkspaceId,
  workspacesOfOrganization,
} from "../../domain/workspaces/workspace-repo.js";
import { toBigInt } from "../../lib/money.js";
import type { ActivityStore } from "../../stores/activity-store.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { LedgerScope, Totals } from "../../domain/usage/ledger.js";
import { monthIndex, weekIndex, windowIndex, type WindowKind } from "../../domain/usage/windows.js";
import { countOrganizationFeedback } from "../../domain/generation-feedback/generation-feedback-repo.js";
import { countQueuedFeedback } from "../../domain/generation-feedback/feedback-queue-repo.js";
import { countPendingRows } from "../../domain/ingest/repos/pending-repo.js";
import { readActivityFeedbackCount, readActivityTotals } from "./activity-totals.js";

const DAY_MS = 86_400_000;
const KINDS: readonly WindowKind[] = ["day", "week", "month", "all"];

/** One ledger counter (scope, id, window) with what the activity store says it should hold. */
export interface Drift {
  scope: LedgerScope;
  /** Key hash or workspace id. */
  scopeId: string;
  /** Key or workspace name (null when the record store no longer knows the id). */
  name: string | null;
  window: WindowKind;
  windowIndex: number;
  /** Whether the window contains "now" (the one key usage fields and budgets read). */
  current: boolean;
  ledger: Totals;
  activity: Totals;
}

export interface ReconcileReport {
  organizationId: string;
  checkedAt: Date;
  /** Counters compared (every window with activity or a ledger row). */
  compared: number;
  drifts: Drift[];
  /**
   * Ids accepted by the record store (generations_seen), rows in the activity store, and rows
   * accepted while the activity store was down and parked for it (written by the server's next
   * pass: a difference they explain is still a difference until then).
   */
  records: { ledger: number; activity: number; pending: number };
  /**
   * Feedback submissions: stored in the record store, held by the activity store (what analytics
   * counts), and queued for it (written by the server's next pass: a difference they explain is
   * still a difference until then).
   */
  feedback: { stored: number; activity: number; queued: number };
  /** No drift, as many activity rows as accepted ids, and as much feedback in both stores. */
  inSync: boolean;
}

export interface ReconcileOptions {
  /** "all" (default): every day, week and month ever counted; "current": the windows containing now, and all time. */
  windows?: "all" | "current";
  /** Time limit of the activity-store query. */
  timeoutMs?: number;
}

/** Index of the month containing day d (UTC). */
const monthOfDay = (d: number): number => monthIndex(new Date(d * DAY_MS));

const cellKey = (scope: LedgerScope, id: string, kind: WindowKind, index: number) =>
  `${scope}\u0000${id}\u0000${kind}\u0000${index}`;

/**
 * Recomputes the usage ledger of an organization from its activity and compares, counter by
 * counter: per key and per workspace, per window (day, ISO week, month, all time), credits
 * (`usage`) and BYOK (`byok_usage_inference`) apart. Workspace attribution follows ingest: a
 * record's workspace, or for legacy records (workspace null) the organization's default
 * workspace, or when there is none the key's workspace. It also compares how many accepted
 * generations and how many feedback submissions each store holds.
 *
 * The two stores are read one after the other; an ingest committing in between can show as a
 * transient drift, so compare at a quiet moment or check again (the CLI does).
 */
export async function reconcileLedger(
  deps: { store: RecordStore; activity: ActivityStore; clock: Clock },
  organizationId: string,
  opts: ReconcileOptions = {},
): Promise<ReconcileReport> {
  const { store, activity, clock } = deps;
  const now = clock.now();
  const currentIndex = Object.fromEntries(KINDS.map((k) => [k, windowIndex(k, now)])) as Record<
    WindowKind,
    number
  >;
  const onlyCurrent = opts.windows === "current";

  const [ledgerRows, keys, workspaces, seen, feedbackStored, feedbackQueued, pending] = await Promise.all([
    store.db
      .selectFrom("usage_counters")
      .select(["scope", "scope_id", "window", "window_index", "usage_nano", "byok_nano"])
      .where("organization_id", "=", organizationId)
      .execute(),
    keysOfOrganization(store.db, organizationId),
    workspacesOfOrganization(store.db, organizationId),
    store.db
      .selectFrom("generations_seen")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("organization_id", "=", organizationId)
      .executeTakeFirst(),
    countOrganizationFeedback(store.db, organizationId),
    countQueuedFeedback(store.db, organizationId),
    countPendingRows(store.db, organizationId),
  ]);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const [days, feedbackActivity] = await Promise.all([
    readActivityTotals(activity, organizationId, timeoutMs),
    readActivityFeedbackCount(activity, organizationId, timeoutMs),
  ]);

  const keyWorkspace = new Map(keys.map((k) => [k.hash, k.workspace_id]));
  // Legacy activity (no workspace) belongs where ingest counted it: the one rule of workspace-repo.
  const defaultWorkspace = await activityDefaultWorkspaceId(store.db, organizationId);
  const names = new Map<string, string>([
    ...keys.map((k) => [`key\u0000${k.hash}`, k.name] as [string, string]),
    ...workspaces.map((w) => [`workspace\u0000${w.id}`, w.name] as [string, string]),
  ]);

  interface Cell {
    scope: LedgerScope;
    scopeId: string;
    window: WindowKind;
    index: number;
    ledger: Totals;
    activity: Totals;
  }
  const cells = new Map<string, Cell>();
  const cell = (scope: LedgerScope, scopeId: string, window: WindowKind, index: number): Cell => {
    const k = cellKey(scope, scopeId, window, index);
    let c = cells.get(k);
    if (!c) {
      c = {
        scope,
        scopeId,
        window,
        index,
        ledger: { usage: 0n, byok: 0n },
        activity: { usage: 0n, byok: 0n },
      };
      cells.set(k, c);
    }
    return c;
  };
  const wanted = (kind: WindowKind, index: number) => !onlyCurrent || currentIndex[kind] === index;

  for (const r of ledgerRows) {
    const kind = r.window as WindowKind;
    const index = Number(r.window_index);
    if (!wanted(kind, index)) continue;
    const c = cell(r.scope as LedgerScope, r.scope_id, kind, index);
    c.ledger.usage += toBigInt(r.usage_nano);
    c.ledger.byok += toBigInt(r.byok_nano);
  }

  let activityRecords = 0;
  for (const d of days) {
    activityRecords += d.records;
    const ws = d.workspaceId ?? defaultWorkspace ?? keyWorkspace.get(d.keyHash) ?? "(unknown workspace)";
    const indexes: Record<WindowKind, number> = {
      day: d.day,
      week: weekIndex(new Date(d.day * DAY_MS)),
      month: monthOfDay(d.day),
      all: 0,
    };
    for (const [scope, id] of [
      ["key", d.keyHash],
      ["workspace", ws],
    ] as const) {
      for (const kind of KINDS) {
        if (!wanted(kind, indexes[kind])) continue;
        const c = cell(scope, id, kind, indexes[kind]);
        c.activity.usage += d.usage;
        c.activity.byok += d.byok;
      }
    }
  }

  const drifts: Drift[] = [];
  for (const c of cells.values()) {
    if (c.ledger.usage === c.activity.usage && c.ledger.byok === c.activity.byok) continue;
    drifts.push({
      scope: c.scope,
      scopeId: c.scopeId,
      name: names.get(`${c.scope}\u0000${c.scopeId}`) ?? null,
      window: c.window,
      windowIndex: c.index,
      current: currentIndex[c.window] === c.index,
      ledger: c.ledger,
      activity: c.activity,
    });
  }
  const order: Record<WindowKind, number> = { all: 0, month: 1, week: 2, day: 3 };
  drifts.sort(
    (a, b) =>
      a.scope.localeCompare(b.scope) ||
      (a.name ?? a.scopeId).localeCompare(b.name ?? b.scopeId) ||
      a.scopeId.localeCompare(b.scopeId) ||
      order[a.window] - order[b.window] ||
      b.windowIndex - a.windowIndex,
  );
  const records = { ledger: Number(seen?.n ?? 0), activity: activityRecords, pending };
  const feedback = { stored: feedbackStored, activity: feedbackActivity, queued: feedbackQueued };
  return {
    organizationId,
    checkedAt: now,
    compared: cells.size,
    drifts,
    records,
    feedback,
    inSync:
      drifts.length === 0 && records.ledger === records.activity && feedback.stored === feedback.activity,
  };
}

/** `day 2026-11-18`, `week of 2026-11-16`, `month 2026-11`, `all time`. */
export function windowLabel(kind: WindowKind, index: number): string {
  switch (kind) {
    case "day":
      return `day ${new Date(index * DAY_MS).toISOString().slice(0, 10)}`;
    case "week":
      return `week of ${new Date((index * 7 - 3) * DAY_MS).toISOString().slice(0, 10)}`;
    case "month":
      return `month ${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, "0")}`;
    case "all":
      return "all time";
  }
}
