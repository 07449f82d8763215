import type { RecordStore } from "../../stores/record-store.js";
import {
  markDelivered,
  markFailed,
  releaseLease,
  splitDelivery,
  type ClaimedDelivery,
} from "../outbox/claims-repo.js";
import { releaseBatches } from "../outbox/batches-repo.js";
import { recordError } from "../outbox/queue-upkeep.js";
import type { CircuitBreaker } from "./backoff.js";
import type { OpenedClaim } from "./claim.js";
import type { BreakerVerdict, Fate, Outcomes } from "./outcomes.js";

export interface SettleDeps {
  store: RecordStore;
  breaker: CircuitBreaker;
  /** Generations of the claim settled (the process's metrics). */
  settled(outcome: "delivered" | "retrying" | "dead", generations: number): void;
}

/** A claimed row, or a part of one after a split, and what becomes of it. */
interface Settled {
  row: ClaimedDelivery;
  fate: Fate;
}

/**
 * The settle stage of a delivery (claim → encode → send → outcomes → settle): writes what the
 * outcomes stage decided. A row whose generations had different outcomes is split first, one row
 * per outcome; then the delivered rows are marked in one statement (the last success is read from
 * them, delivery-status.ts), released rows are given back, failed ones retried or dead-lettered,
 * the destination's error recorded and its circuit breaker told.
 */
export async function settleClaim(deps: SettleDeps, claim: OpenedClaim, outcomes: Outcomes, nowMs: number) {
  const { db } = deps.store;
  const settled = await splitRows(deps.store, claim.lease, outcomes);
  const delivered = settled.filter((s) => s.fate.kind === "delivered");
  if (delivered.length > 0) {
    await markDelivered(
      db,
      delivered.map((s) => s.row.id),
      claim.lease,
      nowMs,
    );
    deps.settled(
      "delivered",
      delivered.reduce((n, s) => n + s.row.ids.length, 0),
    );
  }
  const released = settled.filter((s) => s.fate.kind === "released").map((s) => s.row.id);
  if (released.length > 0) await releaseLease(db, released, claim.lease);
  for (const { row, fate } of settled) {
    if (fate.kind !== "retry" && fate.kind !== "dead") continue;
    const dead = fate.kind === "dead";
    const next = fate.kind === "retry" ? fate.atMs : nowMs;
    await markFailed(db, row.id, claim.lease, nowMs, claim.masker.mask(fate.error), dead, next);
    deps.settled(dead ? "dead" : "retrying", row.ids.length);
  }
  const { id } = claim.destination;
  if (outcomes.destinationError !== null) {
    await recordError(db, id, nowMs, claim.masker.mask(outcomes.destinationError));
  }
  tellBreaker(deps.breaker, id, outcomes.breaker, nowMs);
  if (outcomes.anyDead) await releaseBatches(db, [...new Set(claim.rows.map((c) => c.batchSeq))]);
}

function tellBreaker(breaker: CircuitBreaker, id: string, verdict: BreakerVerdict, nowMs: number): void {
  if (verdict.kind === "success") breaker.success(id);
  if (verdict.kind !== "failure") return;
  breaker.failure(id, nowMs);
  if (verdict.holdUntilMs !== null) breaker.hold(id, nowMs, verdict.holdUntilMs);
}

/** Each row with more than one outcome split into one row per outcome (skipped if no longer ours). */
async function splitRows(store: RecordStore, lease: string, outcomes: Outcomes): Promise<Settled[]> {
  const out: Settled[] = [];
  for (const { row, parts } of outcomes.rows) {
    if (parts.length <= 1) {
      out.push({ row, fate: parts[0]?.fate ?? { kind: "delivered" } });
      continue;
    }
    const rowIds = await splitDelivery(store, row.id, lease, parts);
    if (rowIds === null) continue; // no longer this claim's
    parts.forEach((p, i) => out.push({ row: { ...row, id: rowIds[i] as number, ids: p.ids }, fate: p.fate }));
  }
  return out;
}
