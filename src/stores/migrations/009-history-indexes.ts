import { sql, type Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * Indexes for statements whose cost grew with what piles up (found with EXPLAIN QUERY PLAN on a
 * store with a year of history and a destination down; docs/performance.md "Statements that do
 * not grow with history"):
 * - `broadcast_deliveries_batch` gains `state`: releasing outbox batches asks, per batch, whether
 *   a pending delivery still needs it; with `batch_seq` alone SQLite walked every pending row for
 *   each batch (quadratic in a down destination's backlog: 9 s per pass at 20,000 deliveries).
 * - `broadcast_deliveries_dest_finished`: a destination's latest dead letters without sorting
 *   all the dead rows it keeps.
 * - `api_keys_live_org_workspace_created`: listing a workspace's keys without walking the deleted
 *   ones (keys rotated for a year).
 * - `destinations_org`: an organization's destinations, read in every recorder flush's
 *   transaction (Broadcast's enqueue) and by the fan-out, without scanning every organization's.
 * - `broadcast_deliveries_pending` (partial: pending rows): a claim takes a destination's oldest
 *   due rows in id order. Meant to keep PostgreSQL off the primary key, which it walked through
 *   every kept row (5 ms per claim beside a 20,000-row backlog); on an ANALYZEd table it did not
 *   suffice, and migration 010's statistics are what keep the planner off it.
 * - `workspaces_org_default`: an organization's default workspace (analytics of records without
 *   a workspace, the fan-out) without scanning every organization's workspaces.
 */
export function historyIndexes(_caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex("broadcast_deliveries_batch").execute();
      await db.schema
        .createIndex("broadcast_deliveries_batch")
        .on("broadcast_deliveries")
        .columns(["batch_seq", "state"])
        .execute();
      await db.schema
        .createIndex("broadcast_deliveries_dest_finished")
        .on("broadcast_deliveries")
        .columns(["destination_id", "state", "finished_at_ms"])
        .execute();
      await db.schema
        .createIndex("api_keys_live_org_workspace_created")
        .on("api_keys")
        .columns(["organization_id", "workspace_id", "created_at"])
        .where(sql.ref("deleted_at"), "is", null)
        .execute();
      await db.schema
        .createIndex("destinations_org")
        .on("destinations")
        .columns(["organization_id"])
        .execute();
      await db.schema
        .createIndex("broadcast_deliveries_pending")
        .on("broadcast_deliveries")
        .columns(["destination_id", "id"])
        .where(sql.ref("state"), "=", sql.lit("pending"))
        .execute();
      await db.schema
        .createIndex("workspaces_org_default")
        .on("workspaces")
        .columns(["organization_id", "is_default"])
        .execute();
    },
  };
}
