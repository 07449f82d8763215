import { enabledDestinationIds } from "../../domain/destinations/destination-repo.js";
import type { Db } from "../../stores/record-store.js";
import type { LiveContext } from "../live-context.js";
import { insertOutboxBatch } from "./batches-repo.js";

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
  const enabled = await enabledDestinationIds(trx, organizationId);
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
  await insertOutboxBatch(trx, {
    organizationId,
    createdAtMs: offer.nowMs,
    payload: payload(),
    contexts,
    destinationIds: enabled,
  });
  return true;
}
