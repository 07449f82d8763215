import type { Db } from "../../stores/record-store.js";

const num = (v: unknown): number => Number(v);

/** A destination with due deliveries (its type never changes, so its encoder is known up front). */
export interface DueDestination {
  id: string;
  type: string;
  /** Generations due now (not leased) for it. */
  pending: number;
  /**
   * Ripe only for holding full batches (not for age): how many full claims it is worth; the
   * remainder waits. Null: claim all that is due.
   */
  fullClaims: number | null;
}

/**
 * When a destination's due rows are worth a claim (docs/broadcast.md "Linger"): always when
 * `ripeBeforeMs` is null; otherwise when its oldest due row was accepted before `ripeBeforeMs`, or
 * one of them is a retry (its backoff already waited), or at least `fullAt(type)` generations
 * are due (a full request).
 */
export interface Ripeness {
  ripeBeforeMs: number | null;
  fullAt(type: string): number;
  /** The smallest fullAt over all types (the statement's own filter; fullAt refines it). */
  minFull: number;
}

/** Due rows read per destination, at most (dueDestinations with `lateral`: caps.lateralJoins). */
export const DUE_ROWS_PER_DESTINATION = 128;

/**
 * Destinations with deliveries due now and not leased, whose destination is live and enabled
 * (disabling pauses at once: its rows are simply not claimed), and ripe (Ripeness). `lateral`
 * (where the engine has lateral joins: DialectCaps.lateralJoins) bounds the rows read per
 * destination (see below).
 */
export async function dueDestinations(
  db: Db,
  nowMs: number,
  limit: number,
  ripe: Ripeness | null = null,
  lateral = false,
): Promise<DueDestination[]> {
  // From the destinations, then each one's due rows by index (broadcast_deliveries_due): a join
  // that started from the deliveries walked every pending row, those backing off included. A
  // CROSS JOIN keeps SQLite's join order. PostgreSQL (`lateral`) plans a join by its own lights
  // and read every pending row (20 ms per poll at 200,000); a LATERAL subquery reads at most
  // DUE_ROWS_PER_DESTINATION of each destination's due rows, the oldest due first: enough to
  // size its claims (pending counts those rows only).
  const crossJoin = db.selectFrom("destinations as x").crossJoin("broadcast_deliveries as d");
  const base = lateral
    ? (db.selectFrom("destinations as x").innerJoinLateral(
        (eb) =>
          eb
            .selectFrom("broadcast_deliveries as dd")
            .select(["dd.destination_id", "dd.item_count", "dd.created_at_ms", "dd.attempts"])
            .whereRef("dd.destination_id", "=", "x.id")
            .where("dd.state", "=", "pending")
            .where("dd.next_attempt_ms", "<=", nowMs)
            .where((w) => w.or([w("dd.lease_until_ms", "is", null), w("dd.lease_until_ms", "<", nowMs)]))
            .orderBy("dd.next_attempt_ms")
            .limit(DUE_ROWS_PER_DESTINATION)
            .as("d"),
        (join) => join.onTrue(),
      ) as unknown as typeof crossJoin) // the same columns, as far as the query below goes
    : crossJoin
        .whereRef("d.destination_id", "=", "x.id")
        .where("d.state", "=", "pending")
        .where("d.next_attempt_ms", "<=", nowMs)
        .where((eb) => eb.or([eb("d.lease_until_ms", "is", null), eb("d.lease_until_ms", "<", nowMs)]));
  let q = base
    .select((eb) => [
      "d.destination_id",
      "x.type",
      eb.fn.sum<number>("d.item_count").as("pending"),
      eb.fn.min<number>("d.created_at_ms").as("oldest"),
      eb.fn.max<number>("d.attempts").as("retried"),
    ])
    .where("x.enabled", "=", 1)
    .where("x.deleted_at", "is", null)
    .groupBy(["d.destination_id", "x.type"]);
  const cutoff = ripe?.ripeBeforeMs ?? null;
  if (ripe !== null && cutoff !== null) {
    q = q.having((eb) =>
      eb.or([
        eb(eb.fn.min("d.created_at_ms"), "<=", cutoff),
        eb(eb.fn.max("d.attempts"), ">", 0),
        eb(eb.fn.sum("d.item_count"), ">=", ripe.minFull),
      ]),
    );
  }
  const rows = await q.limit(limit).execute();
  const out: DueDestination[] = [];
  for (const r of rows) {
    const pending = num(r.pending);
    const early = ripe !== null && cutoff !== null && num(r.oldest) > cutoff && num(r.retried) === 0;
    // The statement let it through on minFull alone: it must hold a full batch of its own type.
    const fullClaims = early ? Math.floor(pending / Math.max(1, ripe.fullAt(r.type))) : null;
    if (fullClaims !== 0) out.push({ id: r.destination_id, type: r.type, pending, fullClaims });
  }
  return out;
}
