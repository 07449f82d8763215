import type { Db } from "../../stores/record-store.js";
import { QueryTemplate } from "../../stores/query-template.js";
import type { LiveContext } from "../live-context.js";

/**
 * The organization's enabled destinations, compiled once: it runs once per accepted batch (per
 * recorder flush of the gateway), and building it per call was about a third of
 * enqueueBroadcast's time in a profile.
 */
const enabledDestinations = new QueryTemplate((db: Db, _shape, organizationId: string) =>
  db
    .selectFrom("destinations")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("enabled", "=", 1)
    .where("deleted_at", "is", null)
    .compile(),
);

/** What ingest hands to the outbox for a batch it accepts with broadcast on. */
export interface BroadcastOffer {
  nowMs: number;
  /** Served content and request details by generation id (the gateway's); absent ids have none. */
  contexts: ReadonlyMap<string, LiveContext> | null;
}

/**
 * Writes the outbox row of an accepted batch, inside the transaction that accepts it, so that no
 * crash can accept a generation and lose its delivery. One row per batch whatever the number of
 * destinations (docs/broadcast.md "Outbox (write amplification)"); the fan-out to destinations happens
 * after the commit. Nothing is written when the organization has no enabled destination (read in
 * this transaction, so a destination enabled before it commits sees the batch); the row names the
 * destinations enabled now, which take it even if paused before the fan-out (their queue then
 * waits). Returns whether a row was written.
 */
export async function enqueueBroadcast(
  trx: Db,
  organizationId: string,
  ids: readonly string[],
  payload: () => string,
  offer: BroadcastOffer,
): Promise<boolean> {
  const enabled = (await enabledDestinations.execute(trx, "", organizationId)).rows;
  if (enabled.length === 0) return false;
  let contexts: string | null = null;
  if (offer.contexts !== null && offer.contexts.size > 0) {
    const kept: Record<string, LiveContext> = {};
    let n = 0;
    for (const id of ids) {
      const c = offer.contexts.get(id);
      if (c !== undefined) {
        kept[id] = c;
        n++;
      }
    }
    if (n > 0) contexts = JSON.stringify(kept);
  }
  await trx
    .insertInto("broadcast_batches")
    .values({
      organization_id: organizationId,
      created_at_ms: offer.nowMs,
      payload: payload(),
      contexts,
      destination_ids: JSON.stringify(enabled.map((d) => d.id)),
      fanned_out: 0,
    })
    .execute();
  return true;
}
