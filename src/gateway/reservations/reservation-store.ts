import type { HoldPlan } from "./enforcement.js";
import type { HoldRequest, Room } from "./room.js";

/**
 * Where holds live. `reserve` is atomic: it reads settled spend (the ledger) and every other open
 * hold, lets `decide` size the hold (or throw a refusal) and takes it, with no other reserve or
 * settle of the same workspace in between. Holds past their expiry count for nothing.
 *
 * Settling: `settle(id, charge, chargedNano)` runs `charge` (the generation's record, which is
 * what moves the ledger) and only then drops the hold, so the spend is never invisible to a
 * concurrent reserve (it may briefly count twice, which only refuses more). `chargedNano` is what
 * the charge adds where the hold counts (cost plus BYOK cost): a store may count the hold at that
 * amount instead of its worst case while the charge runs, since the answer's size is known by
 * then (the memory store does: its records may gather for a while before they commit; PostgreSQL
 * keeps the worst case, whose durable answers wait for their commit anyway). `release` drops a
 * hold with no charge. The caller guarantees one settle or release per hold (src/gateway/reservations/hold.ts).
 */
export interface ReservationStore {
  readonly kind: "memory" | "postgres";
  reserve(req: HoldRequest, decide: (room: Room) => HoldPlan): Promise<HoldPlan>;
  settle(id: string, charge: () => Promise<void>, chargedNano: bigint): Promise<void>;
  release(id: string): Promise<void>;
  /** Pushes the expiry of these (in-flight) holds to now + ttl. */
  renew(ids: readonly string[]): Promise<void>;
  /** Open holds (tests and diagnostics). */
  openCount(): Promise<number>;
  /** Where the store reports trouble that no request sees (the app's logger). */
  onWarning(listener: (message: string) => void): void;
  /** Waits for the store's own background work (before the record store closes). */
  close(): Promise<void>;
}
