import { updateDestinationRow } from "../../domain/destinations/destination-repo.js";
import { requireDestinationRow } from "../../domain/destinations/get-destination.js";
import type { Clock } from "../../lib/clock.js";
import type { RecordStore } from "../../stores/record-store.js";
import { discardDestinationQueue } from "../outbox/queue-upkeep.js";

/**
 * Soft delete: sets deleted_at and discards the destination's Broadcast queue in the same
 * transaction (a Broadcast operation: it reaches the queue, which the domain does not know). A destination already deleted (or never seen) is 404.
 */
export async function deleteDestination(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  id: string,
): Promise<void> {
  await store.transaction(async (trx) => {
    const row = await requireDestinationRow(trx, organizationId, id, store.caps.supportsForUpdate);
    const at = clock.now().toISOString();
    await updateDestinationRow(trx, row.id, { deleted_at: at, updated_at: at });
    await discardDestinationQueue(trx, row.id);
  });
}
