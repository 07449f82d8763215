import { sql } from "kysely";
import type { Db, RecordStore } from "../../stores/record-store.js";

/** A claimed delivery row (leased to this worker). */
export interface ClaimedDelivery {
  id: number;
  batchSeq: number;
  ids: string[];
  attempts: number;
  createdAtMs: number;
}

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

/** What delivery needs of the destination row, read in the claim statement itself. */
export interface ClaimedDestination {
  id: string;
  type: string;
  organizationId: string;
  configCiphertext: string;
  privacyMode: boolean;
  cost: boolean;
  identity: boolean;
  requestContext: boolean;
}

export interface Claim {
  rows: ClaimedDelivery[];
  /** The destination as it is at the claim (null when nothing was claimed). */
  destination: ClaimedDestination | null;
}

type DestinationColumn =
  | "type"
  | "organization_id"
  | "config_ciphertext"
  | "privacy_mode"
  | "broadcast_generation_cost"
  | "broadcast_generation_identity"
  | "broadcast_generation_request_context";

/** Rows looked at per claim (the claim takes a prefix of them up to `maxItems` generations). */
const CLAIM_WINDOW = 64;

/**
 * Leases due rows of one live, enabled destination, oldest first, up to `maxItems` generations
 * (at least one row), in **one statement**: `UPDATE … WHERE id IN (a prefix of the due rows by a
 * running sum of their generation counts) RETURNING` the rows and the destination's current
 * type, organization, sealed config and flags (scalar subqueries, so no separate read of the
 * destination). On PostgreSQL the due rows are locked with FOR UPDATE SKIP LOCKED inside that
 * statement, so two instances never lease the same row; the lease then keeps it theirs until
 * `leaseMs` passes. A destination disabled or deleted meanwhile yields nothing.
 */
export async function claimDeliveries(
  store: RecordStore,
  destinationId: string,
  owner: string,
  nowMs: number,
  leaseMs: number,
  maxItems: number,
): Promise<Claim> {
  const db = store.db;
  // `state` as a literal: it must match broadcast_deliveries_pending's own condition for the
  // planner to consider that index (a destination's pending rows in id order, no sort). On
  // PostgreSQL the statistics of migration 010 keep it off the primary key, which it otherwise
  // walked through every kept row (5.6 ms against 0.15 ms per claim beside a 20,000-row backlog).
  let due = db
    .selectFrom("broadcast_deliveries")
    .select(["id", "item_count"])
    .where("destination_id", "=", destinationId)
    .where("state", "=", sql.lit("pending"))
    .where("next_attempt_ms", "<=", nowMs)
    .where((eb) => eb.or([eb("lease_until_ms", "is", null), eb("lease_until_ms", "<", nowMs)]))
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom("destinations")
          .select("destinations.id")
          .where("destinations.id", "=", destinationId)
          .where("destinations.enabled", "=", 1)
          .where("destinations.deleted_at", "is", null),
      ),
    )
    .orderBy("id")
    .limit(CLAIM_WINDOW);
  if (store.caps.supportsForUpdate) due = due.forUpdate().skipLocked();
  const prefix = db
    .selectFrom(
      db
        .selectFrom(due.as("due"))
        .select((eb) => [
          "due.id",
          eb.fn
            .sum<number>("due.item_count")
            .over((ob) => ob.orderBy("due.id"))
            .as("running"),
          eb.fn
            .agg<number>("row_number", [])
            .over((ob) => ob.orderBy("due.id"))
            .as("position"),
        ])
        .as("w"),
    )
    .select("w.id")
    .where((eb) => eb.or([eb("w.running", "<=", maxItems), eb("w.position", "=", 1)]));
  const dest = (column: DestinationColumn) =>
    db.selectFrom("destinations").select(column).where("destinations.id", "=", destinationId);
  const rows = await db
    .updateTable("broadcast_deliveries")
    .set({ lease_owner: owner, lease_until_ms: nowMs + leaseMs })
    .where("id", "in", prefix)
    .returning([
      "id",
      "batch_seq",
      "ids",
      "attempts",
      "created_at_ms",
      dest("type").as("d_type"),
      dest("organization_id").as("d_organization_id"),
      dest("config_ciphertext").as("d_config"),
      dest("privacy_mode").as("d_privacy_mode"),
      dest("broadcast_generation_cost").as("d_cost"),
      dest("broadcast_generation_identity").as("d_identity"),
      dest("broadcast_generation_request_context").as("d_request_context"),
    ])
    .execute();
  if (rows.length === 0) return { rows: [], destination: null };
  const first = rows[0]!;
  const flag = (v: unknown): boolean => Number(v) === 1;
  return {
    rows: rows
      .map((r) => ({
        id: num(r.id),
        batchSeq: num(r.batch_seq),
        ids: JSON.parse(r.ids) as string[],
        attempts: num(r.attempts),
        createdAtMs: num(r.created_at_ms),
      }))
      .sort((a, b) => a.id - b.id),
    destination: {
      id: destinationId,
      type: String(first.d_type),
      organizationId: String(first.d_organization_id),
      configCiphertext: String(first.d_config),
      privacyMode: flag(first.d_privacy_mode),
      cost: flag(first.d_cost),
      identity: flag(first.d_identity),
      requestContext: flag(first.d_request_context),
    },
  };
}

/** Marks leased rows delivered (only while this worker still holds their lease). */
export async function markDelivered(
  db: Db,
  ids: readonly number[],
  owner: string,
  nowMs: number,
): Promise<number> {
  const r = await db
    .updateTable("broadcast_deliveries")
    .set((eb) => ({
      state: "delivered",
      attempts: eb("attempts", "+", 1),
      finished_at_ms: nowMs,
      lease_owner: null,
      lease_until_ms: null,
      last_error: null,
    }))
    .where("id", "in", ids)
    .where("lease_owner", "=", owner)
    .where("state", "=", "pending")
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** A failed attempt: retried at `nextAttemptMs`, or dead-lettered when `dead`. */
export async function markFailed(
  db: Db,
  id: number,
  owner: string,
  nowMs: number,
  error: string,
  dead: boolean,
  nextAttemptMs: number,
): Promise<void> {
  await db
    .updateTable("broadcast_deliveries")
    .set((eb) => ({
      state: dead ? "dead" : "pending",
      attempts: eb("attempts", "+", 1),
      finished_at_ms: dead ? nowMs : null,
      next_attempt_ms: dead ? nowMs : nextAttemptMs,
      lease_owner: null,
      lease_until_ms: null,
      last_error: error,
    }))
    .where("id", "=", id)
    .where("lease_owner", "=", owner)
    .where("state", "=", "pending")
    .execute();
}

/** One part of a delivery row's generations (splitDelivery). */
export interface DeliveryPart {
  ids: readonly string[];
  minCreatedMs: number;
  maxCreatedMs: number;
}

/**
 * Splits a leased pending row into one row per part of its generation ids, in one transaction:
 * the first part keeps the row, every other part becomes a copy of it (same destination, batch,
 * attempts, age and lease), so each part can then be settled on its own (markDelivered,
 * markFailed). Used when the requests of one claim had different outcomes for the generations
 * of one row. Resolves to the row id of each part, or null when this claim no longer holds the
 * row's lease (nothing is changed then).
 */
export async function splitDelivery(
  store: RecordStore,
  id: number,
  owner: string,
  parts: readonly DeliveryPart[],
): Promise<number[] | null> {
  return store.transaction(async (trx) => {
    const row = await trx
      .selectFrom("broadcast_deliveries")
      .selectAll()
      .where("id", "=", id)
      .where("lease_owner", "=", owner)
      .where("state", "=", "pending")
      .executeTakeFirst();
    if (row === undefined) return null;
    const [first, ...rest] = parts;
    if (first === undefined) return [];
    const shape = (p: DeliveryPart) => ({
      ids: JSON.stringify(p.ids),
      item_count: p.ids.length,
      min_created_ms: p.minCreatedMs,
      max_created_ms: p.maxCreatedMs,
    });
    await trx.updateTable("broadcast_deliveries").set(shape(first)).where("id", "=", id).execute();
    const out = [id];
    for (const p of rest) {
      const copy = await trx
        .insertInto("broadcast_deliveries")
        .values({
          destination_id: row.destination_id,
          organization_id: row.organization_id,
          batch_seq: row.batch_seq,
          state: row.state,
          attempts: row.attempts,
          created_at_ms: row.created_at_ms,
          next_attempt_ms: row.next_attempt_ms,
          lease_owner: row.lease_owner,
          lease_until_ms: row.lease_until_ms,
          last_error: row.last_error,
          finished_at_ms: row.finished_at_ms,
          ...shape(p),
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      out.push(num(copy.id));
    }
    return out;
  });
}

/** Gives leased rows back untouched (the destination was paused or deleted while claimed). */
export async function releaseLease(db: Db, ids: readonly number[], owner: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable("broadcast_deliveries")
    .set({ lease_owner: null, lease_until_ms: null })
    .where("id", "in", ids)
    .where("lease_owner", "=", owner)
    .execute();
}

/** Deletes outbox batches (and so their content) that no pending delivery needs any more. */
export async function releaseBatches(db: Db, seqs?: readonly number[]): Promise<void> {
  let q = db
    .deleteFrom("broadcast_batches")
    .where("fanned_out", "=", 1)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("broadcast_deliveries")
            .select("broadcast_deliveries.id")
            .whereRef("broadcast_deliveries.batch_seq", "=", "broadcast_batches.seq")
            .where("broadcast_deliveries.state", "=", "pending"),
        ),
      ),
    );
  if (seqs !== undefined) {
    if (seqs.length === 0) return;
    q = q.where("seq", "in", seqs);
  }
  await q.execute();
}

export async function recordError(
  db: Db,
  destinationId: string,
  nowMs: number,
  error: string,
): Promise<void> {
  await db
    .insertInto("broadcast_destination_stats")
    .values({ destination_id: destinationId, last_error: error, last_error_ms: nowMs, cap_dropped: 0 })
    .onConflict((oc) => oc.column("destination_id").doUpdateSet({ last_error: error, last_error_ms: nowMs }))
    .execute();
}

/** Discards a destination's queue (the destination was deleted). */
export async function discardDestinationQueue(db: Db, destinationId: string): Promise<void> {
  await db.deleteFrom("broadcast_deliveries").where("destination_id", "=", destinationId).execute();
  await db.deleteFrom("broadcast_destination_stats").where("destination_id", "=", destinationId).execute();
}

/**
 * Removes delivered and dead rows past their retention, and the deliveries and stats of deleted
 * destinations (an attempt in flight when its destination was deleted records its error after
 * `discardDestinationQueue`; the next prune removes that row).
 * A success is not written per delivery: the last success of a destination is the latest
 * `finished_at_ms` of its delivered rows (delivery-status.ts), so before delivered rows are
 * pruned, their latest finish is folded into `broadcast_destination_stats.last_success_ms`.
 */
export async function pruneDeliveries(
  db: Db,
  nowMs: number,
  deliveredRetentionMs: number,
  deadRetentionMs: number,
): Promise<void> {
  // The deleted destinations' ids first, then their rows by index (a correlated EXISTS made
  // SQLite scan every retained delivery, every second).
  await db
    .deleteFrom("broadcast_deliveries")
    .where("destination_id", "in", (eb) =>
      eb
        .selectFrom("destinations")
        .select("destinations.id")
        .where("destinations.deleted_at", "is not", null),
    )
    .execute();
  await db
    .deleteFrom("broadcast_destination_stats")
    .where("destination_id", "in", (eb) =>
      eb
        .selectFrom("destinations")
        .select("destinations.id")
        .where("destinations.deleted_at", "is not", null),
    )
    .execute();
  const cutoff = nowMs - deliveredRetentionMs;
  await db
    .insertInto("broadcast_destination_stats")
    .columns(["destination_id", "last_success_ms", "cap_dropped"])
    .expression((eb) =>
      eb
        .selectFrom("broadcast_deliveries")
        .select((e) => ["destination_id", e.fn.max("finished_at_ms").as("last"), sql.lit(0).as("dropped")])
        .where("state", "=", "delivered")
        .where("finished_at_ms", "<", cutoff)
        .groupBy("destination_id"),
    )
    .onConflict((oc) =>
      oc.column("destination_id").doUpdateSet({
        last_success_ms: sql`CASE WHEN broadcast_destination_stats.last_success_ms IS NULL
          OR excluded.last_success_ms > broadcast_destination_stats.last_success_ms
          THEN excluded.last_success_ms ELSE broadcast_destination_stats.last_success_ms END`,
      }),
    )
    .execute();
  await db
    .deleteFrom("broadcast_deliveries")
    .where("state", "=", "delivered")
    .where("finished_at_ms", "<", cutoff)
    .execute();
  await db
    .deleteFrom("broadcast_deliveries")
    .where("state", "=", "dead")
    .where("finished_at_ms", "<", nowMs - deadRetentionMs)
    .execute();
}

export const CAP_ERROR = "dropped: the destination's queue passed its cap (BROADCAST_QUEUE_CAP)";

/**
 * Bounded storage: for each destination whose pending generations exceed `cap`, the oldest
 * pending rows are dead-lettered (CAP_ERROR) until it is back under the cap; the number of
 * generations dropped is added to its stats. Resolves to the generations dropped.
 */
export async function enforceCaps(store: RecordStore, cap: number, nowMs: number): Promise<number> {
  const over = await store.db
    .selectFrom("broadcast_deliveries")
    .select(["destination_id", (eb) => eb.fn.sum<number>("item_count").as("n")])
    .where("state", "=", "pending")
    .groupBy("destination_id")
    .having((eb) => eb.fn.sum("item_count"), ">", cap)
    .execute();
  let dropped = 0;
  for (const o of over) {
    let excess = num(o.n) - cap;
    while (excess > 0) {
      // Rows in flight (leased) are left to their claim; the next oldest go instead.
      const oldest = await store.db
        .selectFrom("broadcast_deliveries")
        .select(["id", "item_count"])
        .where("destination_id", "=", o.destination_id)
        .where("state", "=", "pending")
        .where((eb) => eb.or([eb("lease_until_ms", "is", null), eb("lease_until_ms", "<", nowMs)]))
        .orderBy("id")
        .limit(500)
        .execute();
      if (oldest.length === 0) break;
      const ids: number[] = [];
      for (const r of oldest) {
        if (excess <= 0) break;
        ids.push(num(r.id));
        excess -= num(r.item_count);
      }
      const n = await store.transaction(async (trx) => {
        // Rows leased meanwhile (another instance claimed them) are not dropped.
        const dead = await trx
          .updateTable("broadcast_deliveries")
          .set({
            state: "dead",
            finished_at_ms: nowMs,
            last_error: CAP_ERROR,
            lease_owner: null,
            lease_until_ms: null,
          })
          .where("id", "in", ids)
          .where("state", "=", "pending")
          .where((eb) => eb.or([eb("lease_until_ms", "is", null), eb("lease_until_ms", "<", nowMs)]))
          .returning("item_count")
          .execute();
        const n = dead.reduce((sum, r) => sum + num(r.item_count), 0);
        if (n === 0) return 0;
        await trx
          .insertInto("broadcast_destination_stats")
          .values({ destination_id: o.destination_id, cap_dropped: n })
          .onConflict((oc) =>
            oc
              .column("destination_id")
              .doUpdateSet({ cap_dropped: sql`broadcast_destination_stats.cap_dropped + ${n}` }),
          )
          .execute();
        return n;
      });
      dropped += n;
    }
  }
  return dropped;
}
