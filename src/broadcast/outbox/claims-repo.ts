import { sql } from "kysely";
import type { Db, RecordStore } from "../../stores/record-store.js";

/**
 * The claims repository of broadcast_deliveries: claim (lease) due rows of a destination, and settle
 * them (delivered, failed, split, released). Queue upkeep (pruning, caps, releasing batches,
 * statistics) is queue-upkeep.ts; the poll for due destinations is due-destinations.ts.
 */

/** A claimed delivery row (leased to this worker). */
export interface ClaimedDelivery {
  id: number;
  batchSeq: number;
  ids: string[];
  attempts: number;
  createdAtMs: number;
}

const num = (v: unknown): number => Number(v);

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
  const dest = (column: DestinationColumn) =>
    db.selectFrom("destinations").select(column).where("destinations.id", "=", destinationId);
  const rows = await db
    .updateTable("broadcast_deliveries")
    .set({ lease_owner: owner, lease_until_ms: nowMs + leaseMs })
    .where("id", "in", claimPrefix(store, destinationId, nowMs, maxItems))
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
  return claimOf(destinationId, rows);
}

/**
 * The ids of the rows a claim takes: the oldest due rows of a live, enabled destination (at most
 * CLAIM_WINDOW), a prefix of them by a running sum of their generation counts up to `maxItems`
 * (at least one row); locked FOR UPDATE SKIP LOCKED where the engine can.
 */
function claimPrefix(store: RecordStore, destinationId: string, nowMs: number, maxItems: number) {
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
  return db
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
}

/** The claimed rows as returned by the claim statement, with the destination's columns. */
interface ClaimedRow {
  id: unknown;
  batch_seq: unknown;
  ids: string;
  attempts: unknown;
  created_at_ms: unknown;
  d_type: unknown;
  d_organization_id: unknown;
  d_config: unknown;
  d_privacy_mode: unknown;
  d_cost: unknown;
  d_identity: unknown;
  d_request_context: unknown;
}

function claimOf(destinationId: string, rows: readonly ClaimedRow[]): Claim {
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
