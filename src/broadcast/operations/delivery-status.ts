import { requireDestinationRow } from "../../domain/destinations/get-destination.js";
import type { Db } from "../../stores/record-store.js";
import { waitingOutboxSummary } from "../outbox/batches-repo.js";

export interface DeadLetter {
  id: number;
  generations: number;
  /** Range of the generations' created_at (ISO), for a replay. */
  from: string;
  to: string;
  attempts: number;
  last_error: string | null;
  dead_at: string | null;
}

export interface DeliveryStatus {
  destination_id: string;
  /** Generations by state (delivered and dead: those still kept, see the retention settings). */
  pending: number;
  delivered: number;
  dead: number;
  /** Milliseconds since the oldest pending generation was accepted; null when none. */
  oldest_pending_age_ms: number | null;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  /** Generations dead-lettered because the queue passed its cap (since the destination was created). */
  dropped_over_cap: number;
  /** This instance's circuit breaker for the destination. */
  circuit: "closed" | "open" | "half_open";
  recent_dead_letters: DeadLetter[];
}

/**
 * The last success: the latest finish among the delivered rows still kept, or the one folded
 * into the stats when older delivered rows were pruned (queue-upkeep.ts pruneDeliveries).
 */
function lastSuccess(folded: unknown, kept: unknown): number | null {
  const values = [folded, kept].filter((v) => v !== null && v !== undefined).map(Number);
  return values.length === 0 ? null : Math.max(...values);
}

const iso = (ms: unknown): string | null =>
  ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();

/** Delivery state of one destination of the organization (404 for another organization's). */
export async function deliveryStatus(
  db: Db,
  organizationId: string,
  destinationId: string,
  nowMs: number,
  circuit: (id: string) => DeliveryStatus["circuit"] = () => "closed",
): Promise<DeliveryStatus> {
  const row = await requireDestinationRow(db, organizationId, destinationId);
  return statusOfRow(db, row.id, nowMs, circuit);
}

export async function statusOfRow(
  db: Db,
  destinationId: string,
  nowMs: number,
  circuit: (id: string) => DeliveryStatus["circuit"] = () => "closed",
): Promise<DeliveryStatus> {
  const counts = await db
    .selectFrom("broadcast_deliveries")
    .select([
      "state",
      (eb) => eb.fn.sum<number>("item_count").as("n"),
      (eb) => eb.fn.min("created_at_ms").as("oldest"),
      (eb) => eb.fn.max("finished_at_ms").as("last_finished"),
    ])
    .where("destination_id", "=", destinationId)
    .groupBy("state")
    .execute();
  const by = (s: string) => counts.find((c) => c.state === s);
  const stats = await db
    .selectFrom("broadcast_destination_stats")
    .selectAll()
    .where("destination_id", "=", destinationId)
    .executeTakeFirst();
  const dead = await db
    .selectFrom("broadcast_deliveries")
    .select([
      "id",
      "item_count",
      "min_created_ms",
      "max_created_ms",
      "attempts",
      "last_error",
      "finished_at_ms",
    ])
    .where("destination_id", "=", destinationId)
    .where("state", "=", "dead")
    // broadcast_deliveries_dest_finished: the latest without sorting every dead row kept.
    .orderBy("finished_at_ms", "desc")
    .orderBy("id", "desc")
    .limit(10)
    .execute();
  const oldest = by("pending")?.oldest;
  return {
    destination_id: destinationId,
    pending: Number(by("pending")?.n ?? 0),
    delivered: Number(by("delivered")?.n ?? 0),
    dead: Number(by("dead")?.n ?? 0),
    oldest_pending_age_ms:
      oldest === undefined || oldest === null ? null : Math.max(0, nowMs - Number(oldest)),
    last_success_at: iso(lastSuccess(stats?.last_success_ms, by("delivered")?.last_finished)),
    last_error: stats?.last_error ?? null,
    last_error_at: iso(stats?.last_error_ms),
    dropped_over_cap: Number(stats?.cap_dropped ?? 0),
    circuit: circuit(destinationId),
    recent_dead_letters: dead.map((d) => ({
      id: Number(d.id),
      generations: Number(d.item_count),
      from: iso(d.min_created_ms) as string,
      to: iso(d.max_created_ms) as string,
      attempts: Number(d.attempts),
      last_error: d.last_error,
      dead_at: iso(d.finished_at_ms),
    })),
  };
}

/** Broadcast's drops across all live destinations, for /readyz (no identifiers: it is public). */
export interface BroadcastDrops {
  /** Generations dead-lettered because a destination's queue passed BROADCAST_QUEUE_CAP. */
  dropped_over_cap: number;
  /** Live destinations that have dropped any. */
  destinations_dropping: number;
}

export async function broadcastDrops(db: Db): Promise<BroadcastDrops> {
  const row = await db
    .selectFrom("broadcast_destination_stats as s")
    .innerJoin("destinations as d", "d.id", "s.destination_id")
    .select((eb) => [
      eb.fn.sum<number>("s.cap_dropped").as("dropped"),
      eb.fn.count<number>("s.destination_id").as("n"),
    ])
    .where("d.deleted_at", "is", null)
    .where("s.cap_dropped", ">", 0)
    .executeTakeFirst();
  return { dropped_over_cap: Number(row?.dropped ?? 0), destinations_dropping: Number(row?.n ?? 0) };
}

/** Broadcast's backlog of one destination type, across organizations (GET /metrics). */
export interface BroadcastBacklog {
  destinationType: string;
  /** Generations pending delivery: due, backing off or in flight. */
  pending: number;
  /** Milliseconds since the oldest of them was accepted; null when none is pending. */
  oldestPendingAgeMs: number | null;
}

/**
 * The pending generations of the live, enabled destinations by type, and the age of the oldest
 * (docs/operations.md "Metrics"). A paused (disabled) destination's queue waits by its owner's
 * choice and is left out, as the delivery worker leaves it; a type whose destinations have
 * nothing pending reads 0. No organization or destination appears: only types.
 *
 * From the destinations, then each one's pending rows by index (broadcast_deliveries_due's
 * `(destination_id, state)` prefix), like dueDestinations: the cost follows the backlog, never
 * the delivered and dead rows kept. SQLite keeps a LEFT JOIN's order (destinations first);
 * PostgreSQL (`lateral`: DialectCaps.lateralJoins) gets a LATERAL aggregate per destination so
 * that it cannot hash-join a scan of the whole table instead
 * (test/contract/history-plans.test.ts checks both plans). About 25 ms on SQLite beside a down
 * destination's 100,000 pending rows (a million generations, the default queue cap) and 200,000
 * delivered ones; 6 ms at 20,000 pending rows.
 */
export async function broadcastBacklog(db: Db, nowMs: number, lateral = false): Promise<BroadcastBacklog[]> {
  const live = db
    .selectFrom("destinations as x")
    .where("x.enabled", "=", 1)
    .where("x.deleted_at", "is", null)
    .groupBy("x.type");
  const rows = lateral
    ? await live
        .innerJoinLateral(
          (eb) =>
            eb
              .selectFrom("broadcast_deliveries as d")
              .select((e) => [
                e.fn.sum<number | null>("d.item_count").as("n"),
                e.fn.min<number | null>("d.created_at_ms").as("oldest"),
              ])
              .whereRef("d.destination_id", "=", "x.id")
              .where("d.state", "=", "pending")
              .as("p"),
          (join) => join.onTrue(),
        )
        .select((eb) => [
          "x.type",
          eb.fn.sum<number | null>("p.n").as("pending"),
          eb.fn.min<number | null>("p.oldest").as("oldest"),
        ])
        .execute()
    : await live
        .leftJoin("broadcast_deliveries as d", (join) =>
          join.onRef("d.destination_id", "=", "x.id").on("d.state", "=", "pending"),
        )
        .select((eb) => [
          "x.type",
          eb.fn.sum<number | null>("d.item_count").as("pending"),
          eb.fn.min<number | null>("d.created_at_ms").as("oldest"),
        ])
        .execute();
  return rows.map((r) => ({
    destinationType: r.type,
    pending: Number(r.pending ?? 0),
    oldestPendingAgeMs:
      r.oldest === null || r.oldest === undefined ? null : Math.max(0, nowMs - Number(r.oldest)),
  }));
}

/** Broadcast's outbox: accepted batches not yet fanned out to their destinations' deliveries. */
export interface BroadcastOutbox {
  batches: number;
  /** Milliseconds since the oldest of them was accepted; null when there is none. */
  oldestAgeMs: number | null;
}

/**
 * The outbox's batches still to fan out, across organizations, and the age of the oldest (GET
 * /metrics). Their generations are in no destination's pending count yet: a fan-out that stalls
 * (no instance running Broadcast, a batch it fails on) shows here and nowhere else. Both from the
 * `(fanned_out, seq)` index: the oldest is the lowest seq (batches are numbered as accepted), so
 * neither statement reads a fanned-out row or a payload (batches-repo.ts).
 */
export async function broadcastOutbox(db: Db, nowMs: number): Promise<BroadcastOutbox> {
  const { batches, oldestCreatedAtMs } = await waitingOutboxSummary(db);
  return { batches, oldestAgeMs: oldestCreatedAtMs === null ? null : Math.max(0, nowMs - oldestCreatedAtMs) };
}
