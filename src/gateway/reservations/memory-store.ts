import { committedUsageOf, type CommittedUsage } from "../../domain/usage/committed-usage.js";
import { readKeyAndWorkspaceUsage } from "../../domain/usage/ledger.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { HoldPlan } from "../enforcement.js";
import type { ReservationStore } from "./reservation-store.js";
import { roomOf, type HoldRequest, type Room } from "./room.js";

interface Hold {
  keyHash: string;
  workspaceId: string;
  amount: bigint;
  countsKey: boolean;
  countsWorkspace: boolean;
  expiresAtMs: number;
  /** Set once the hold's charge is committed: the sequence number of that moment. */
  settledSeq: number | null;
}

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
 */
export class MemoryReservationStore implements ReservationStore {
  readonly kind = "memory";
  private readonly holds = new Map<string, Hold>();
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
      const { key: keyTotals, workspace: wsTotals } =
        this.committed?.totals(keyHash, workspaceId, req.now) ??
        (await readKeyAndWorkspaceUsage(this.store.db, keyHash, workspaceId, req.now));
      // From here to the end: synchronous, so no other reserve or settle interleaves.
      const nowMs = Date.now();
      let heldKey = 0n;
      let heldWs = 0n;
      const count = (h: Hold) => {
        if (h.countsKey && h.keyHash === req.key.hash) heldKey += h.amount;
        if (h.countsWorkspace && h.workspaceId === req.workspace.id) heldWs += h.amount;
      };
      for (const [id, h] of this.holds) {
        if (h.expiresAtMs <= nowMs) this.holds.delete(id);
        else count(h);
      }
      for (const h of this.lingering) if ((h.settledSeq ?? 0) > started) count(h);
      const plan = decide(roomOf(req, keyTotals, wsTotals, { key: heldKey, workspace: heldWs }));
      this.holds.set(req.id, {
        keyHash: req.key.hash,
        workspaceId: req.workspace.id,
        amount: plan.amountNano,
        countsKey: req.countsKey,
        countsWorkspace: req.countsWorkspace,
        expiresAtMs: nowMs + this.ttlMs,
        settledSeq: null,
      });
      return plan;
    } finally {
      this.reading.delete(started);
      this.collect();
    }
  }

  async settle(id: string, _workspaceId: string, charge: () => Promise<void>): Promise<void> {
    await charge();
    const h = this.holds.get(id);
    if (!h) return;
    this.holds.delete(id);
    h.settledSeq = ++this.seq;
    this.lingering.push(h);
    this.collect();
  }

  async release(id: string): Promise<void> {
    this.holds.delete(id);
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

  /** Drops lingering holds that no in-flight ledger read can have missed. */
  private collect(): void {
    let oldest = Infinity;
    for (const s of this.reading) if (s < oldest) oldest = s;
    let drop = 0;
    while (drop < this.lingering.length && (this.lingering[drop]?.settledSeq ?? 0) < oldest) drop++;
    if (drop > 0) this.lingering.splice(0, drop);
  }
}
