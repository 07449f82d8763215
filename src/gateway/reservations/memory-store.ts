import { committedUsageOf, type CommittedUsage } from "../../domain/usage/committed-usage.js";
import { readKeyAndWorkspaceUsage } from "../../domain/usage/ledger.js";
import { readCreatorUsage } from "./creator-usage.js";
import { dayIndex, windowDays, type WindowKind } from "../../domain/usage/windows.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { HoldPlan } from "./enforcement.js";
import type { ReservationStore } from "./reservation-store.js";
import {
  guardrailHolders,
  keyWindow,
  roomOf,
  ZERO_WINDOWS,
  type GuardrailTotals,
  type Held,
  type HoldRequest,
  type Room,
} from "./room.js";

interface Hold {
  keyHash: string;
  workspaceId: string;
  /** `organization/creator` of the key (a member guardrail's budget), or null. */
  member: string | null;
  amount: bigint;
  countsKey: boolean;
  countsWorkspace: boolean;
  /** The UTC day of its request's `now` (where its charge lands): it counts in that day's windows. */
  day: number;
  expiresAtMs: number;
  /** Set once the hold's charge is committed: the sequence number of that moment. */
  settledSeq: number | null;
}

/** Held amounts by the UTC day of their requests. */
type ByDay = Map<number, bigint>;

/** Adds `amount` to the total of `id` on `day` in `totals`, dropping totals that reach zero. */
function addTo(totals: Map<string, ByDay>, id: string, day: number, amount: bigint): void {
  const byDay = totals.get(id);
  const next = (byDay?.get(day) ?? 0n) + amount;
  if (next === 0n) {
    if (byDay?.delete(day) && byDay.size === 0) totals.delete(id);
  } else if (byDay === undefined) totals.set(id, new Map([[day, next]]));
  else byDay.set(day, next);
}

const inDays = (day: number, [first, last]: readonly [number, number]): boolean =>
  day >= first && day <= last;

/** What `byDay` holds on the days of a window (one or two days are held at a time: a reset in flight). */
function sumDays(byDay: ByDay | undefined, days: readonly [number, number]): bigint {
  let sum = 0n;
  if (byDay !== undefined) for (const [day, amount] of byDay) if (inDays(day, days)) sum += amount;
  return sum;
}

const WORKSPACE_WINDOWS: readonly WindowKind[] = ["day", "week", "month", "all"];

/**
 * Holds in this process (one instance: embedded SQLite). Where the process keeps a copy of the
 * committed current-window totals (SQLite in a file: src/domain/usage/committed-usage.ts) the
 * whole reserve is synchronous and reads no table on the hot path: the totals, the count of the
 * holds and the new hold, with nothing interleaved and no wait for a transaction in flight.
 * Otherwise (SQLite in memory) the ledger read is asynchronous and the rest is synchronous, so a
 * reserve is atomic except against settles that commit while it reads: a settled hold therefore
 * lingers, counted by every reserve whose ledger read began before the settle committed (it may or
 * may not see the charge: counting it again only refuses more), and is dropped once no such read
 * is in flight. Either way a settle's charge is committed (and in the copy) before its hold is
 * dropped, so a reserve sees the hold or the charge (or both, which only refuses more), never
 * neither.
 *
 * What the open holds add up to is kept per key and per workspace as they are taken and dropped,
 * so a reserve costs the same with ten open holds or ten thousand (long streams keep thousands
 * open on a busy gateway; counting them one by one cost ~18 µs per thousand, docs/performance.md).
 * Expired holds are dropped by a sweep of all holds, run by the first reserve at or past the
 * earliest expiry: a hold in flight is renewed every third of the lifetime (hold.ts), so a sweep
 * runs about once per two thirds of it, and an expired hold never counts in a reserve.
 */
export class MemoryReservationStore implements ReservationStore {
  readonly kind = "memory";
  private readonly holds = new Map<string, Hold>();
  /**
   * Open holds' amounts by key hash (those that count toward the key) and by workspace id, per UTC
   * day of their requests: a hold counts in the windows of its own day, where it will be charged.
   */
  private readonly heldByKey = new Map<string, ByDay>();
  private readonly heldByWorkspace = new Map<string, ByDay>();
  /** Every open hold by key (counting toward the key's limit or not) and by member: guardrail budgets. */
  private readonly heldAnyByKey = new Map<string, ByDay>();
  private readonly heldByMember = new Map<string, ByDay>();
  /** No open hold expires before this (a lower bound: renewals only move expiries later). */
  private earliestExpiryMs = Infinity;
  private readonly lingering: Hold[] = [];
  private seq = 0;
  /** Sequence numbers of reserves whose ledger read is in flight. */
  private readonly reading = new Set<number>();
  private readonly committed: CommittedUsage | null;

  constructor(
    private readonly store: RecordStore,
    private readonly ttlMs: number,
  ) {
    this.committed = committedUsageOf(store);
  }

  async reserve(req: HoldRequest, decide: (room: Room) => HoldPlan): Promise<HoldPlan> {
    const started = ++this.seq;
    this.reading.add(started);
    try {
      const keyHash = req.countsKey && req.key.limitNano !== null ? req.key.hash : null;
      const workspaceId = req.countsWorkspace && req.workspace.budgets.length > 0 ? req.workspace.id : null;
      const holders = guardrailHolders(req);
      const ledgerKey = keyHash ?? (holders.key ? req.key.hash : null);
      const creator = holders.member ? req.key.creatorUserId : null;
      // A member's spend is read from the store (all of the member's keys): before the
      // synchronous part, like any read (a settle committing meanwhile lingers, below).
      const memberTotals =
        creator === null ? null : await readCreatorUsage(this.store.db, req.organizationId, creator, req.now);
      const { key: keyTotals, workspace: wsTotals } =
        this.committed?.totals(ledgerKey, workspaceId, req.now) ??
        (await readKeyAndWorkspaceUsage(this.store.db, ledgerKey, workspaceId, req.now));
      // From here to the end: synchronous, so no other reserve or settle interleaves.
      const nowMs = Date.now();
      if (nowMs >= this.earliestExpiryMs) this.sweep(nowMs);
      const held: Held = { key: 0n, workspace: { day: 0n, week: 0n, month: 0n, all: 0n } };
      // Only what the room reads (roomOf): a key with no limit, a workspace with no budget, none.
      const keyDays = keyHash === null ? null : windowDays(keyWindow(req.key), req.now);
      if (keyDays !== null) held.key = sumDays(this.heldByKey.get(req.key.hash), keyDays);
      const member = creator === null ? null : `${req.organizationId}/${creator}`;
      const guarded = holders.key || member !== null;
      // The days of each window containing the request's day (KINDS order), once.
      const days =
        workspaceId === null && !guarded ? [] : WORKSPACE_WINDOWS.map((k) => windowDays(k, req.now));
      const wsDays = workspaceId === null ? [] : days;
      const byWorkspace = this.heldByWorkspace.get(req.workspace.id);
      wsDays.forEach((d, i) => (held.workspace[WORKSPACE_WINDOWS[i]!] = sumDays(byWorkspace, d)));
      let gTotals: GuardrailTotals | undefined;
      const g = guarded ? { key: ZERO_WINDOWS(), member: ZERO_WINDOWS() } : null;
      if (g) {
        const byKey = this.heldAnyByKey.get(req.key.hash);
        const byMember = member === null ? undefined : this.heldByMember.get(member);
        WORKSPACE_WINDOWS.forEach((k, i) => {
          g.key[k] = sumDays(byKey, days[i]!);
          g.member[k] = sumDays(byMember, days[i]!);
        });
        held.guardrail = g;
        gTotals = { key: keyTotals, member: memberTotals ?? keyTotals };
      }
      for (const h of this.lingering) {
        if ((h.settledSeq ?? 0) <= started) continue;
        if (g) {
          WORKSPACE_WINDOWS.forEach((k, i) => {
            if (!inDays(h.day, days[i]!)) return;
            if (h.keyHash === req.key.hash) g.key[k] += h.amount;
            if (member !== null && h.member === member) g.member[k] += h.amount;
          });
        }
        if (h.countsKey && h.keyHash === req.key.hash && keyDays !== null && inDays(h.day, keyDays)) {
          held.key += h.amount;
        }
        if (h.countsWorkspace && h.workspaceId === req.workspace.id) {
          wsDays.forEach((days, i) => {
            if (inDays(h.day, days)) held.workspace[WORKSPACE_WINDOWS[i]!] += h.amount;
          });
        }
      }
      const plan = decide(roomOf(req, keyTotals, wsTotals, held, gTotals));
      this.add(req.id, {
        keyHash: req.key.hash,
        workspaceId: req.workspace.id,
        member: req.key.creatorUserId === null ? null : `${req.organizationId}/${req.key.creatorUserId}`,
        amount: plan.amountNano,
        countsKey: req.countsKey,
        countsWorkspace: req.countsWorkspace,
        day: dayIndex(req.now),
        expiresAtMs: nowMs + this.ttlMs,
        settledSeq: null,
      });
      return plan;
    } finally {
      this.reading.delete(started);
      this.collect();
    }
  }

  async settle(id: string, charge: () => Promise<void>, chargedNano: bigint): Promise<void> {
    // The answer is complete: while its record gathers and commits, the hold counts what will be
    // charged, not the worst case it was taken for (a key near its limit is not refused for the
    // worst cases of answers already sent). Never less than the charge, so a reserve still sees
    // the hold or the charge, never neither.
    this.resize(id, chargedNano);
    await charge();
    const h = this.remove(id);
    if (!h) return;
    h.settledSeq = ++this.seq;
    this.lingering.push(h);
    this.collect();
  }

  async release(id: string): Promise<void> {
    this.remove(id);
  }

  async renew(ids: readonly string[]): Promise<void> {
    const until = Date.now() + this.ttlMs;
    for (const id of ids) {
      const h = this.holds.get(id);
      if (h) h.expiresAtMs = until;
    }
  }

  async openCount(): Promise<number> {
    return this.holds.size;
  }

  private add(id: string, h: Hold): void {
    this.remove(id); // a repeated id replaces its hold (ids are request + attempt: not expected)
    this.holds.set(id, h);
    if (h.countsKey) addTo(this.heldByKey, h.keyHash, h.day, h.amount);
    if (h.countsWorkspace) addTo(this.heldByWorkspace, h.workspaceId, h.day, h.amount);
    addTo(this.heldAnyByKey, h.keyHash, h.day, h.amount);
    if (h.member !== null) addTo(this.heldByMember, h.member, h.day, h.amount);
    if (h.expiresAtMs < this.earliestExpiryMs) this.earliestExpiryMs = h.expiresAtMs;
  }

  private resize(id: string, amount: bigint): void {
    const h = this.holds.get(id);
    if (!h || h.amount === amount) return;
    const delta = amount - h.amount;
    if (h.countsKey) addTo(this.heldByKey, h.keyHash, h.day, delta);
    if (h.countsWorkspace) addTo(this.heldByWorkspace, h.workspaceId, h.day, delta);
    addTo(this.heldAnyByKey, h.keyHash, h.day, delta);
    if (h.member !== null) addTo(this.heldByMember, h.member, h.day, delta);
    h.amount = amount;
  }

  private remove(id: string): Hold | undefined {
    const h = this.holds.get(id);
    if (!h) return undefined;
    this.holds.delete(id);
    if (h.countsKey) addTo(this.heldByKey, h.keyHash, h.day, -h.amount);
    if (h.countsWorkspace) addTo(this.heldByWorkspace, h.workspaceId, h.day, -h.amount);
    addTo(this.heldAnyByKey, h.keyHash, h.day, -h.amount);
    if (h.member !== null) addTo(this.heldByMember, h.member, h.day, -h.amount);
    return h;
  }

  /** Drops the holds expired at `nowMs` and finds the earliest expiry of those left. */
  private sweep(nowMs: number): void {
    let earliest = Infinity;
    for (const [id, h] of this.holds) {
      if (h.expiresAtMs <= nowMs) this.remove(id);
      else if (h.expiresAtMs < earliest) earliest = h.expiresAtMs;
    }
    this.earliestExpiryMs = earliest;
  }

  /** Drops lingering holds that no in-flight ledger read can have missed. */
  private collect(): void {
    let oldest = Infinity;
    for (const s of this.reading) if (s < oldest) oldest = s;
    let drop = 0;
    while (drop < this.lingering.length && (this.lingering[drop]?.settledSeq ?? 0) < oldest) drop++;
    if (drop > 0) this.lingering.splice(0, drop);
  }

  onWarning(): void {
    // Nothing runs in the background here.
  }

  async close(): Promise<void> {
    // Nothing runs in the background here.
  }
}
