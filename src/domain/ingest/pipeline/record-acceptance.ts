import { enqueueBroadcast, type BroadcastOffer } from "../../../broadcast/outbox/enqueue.js";
import type { Transaction } from "kysely";
import type { RecordStore } from "../../../stores/record-store.js";
import type { Database } from "../../../stores/schema.js";
import { committedUsageOf } from "../../usage/committed-usage.js";
import { addUsageTally, type CounterRow } from "../../usage/ledger.js";
import { bumpActivityVersion } from "../repos/activity-version.js";
import { upsertAppLabels, upsertUserLabels, type UserLabel } from "../repos/labels-repo.js";

/** What the record store learns about accepted rows (PreparedRows carries it). */
export interface Acceptance {
  counters: readonly CounterRow[];
  apps: ReadonlyMap<number, string>;
  users: ReadonlyMap<string, UserLabel>;
}

/** The accepted rows offered to Broadcast: their ids and payload (computed only when needed). */
export interface BroadcastRows {
  offer: BroadcastOffer;
  ids: readonly string[];
  payload: () => string;
}

/**
 * Ledger, labels, activity version and (when offered) the Broadcast outbox row for accepted rows.
 * Call inside the batch's transaction, `trx` of `store.transaction()`. Resolves to whether an
 * outbox row was written. The ledger rows are announced to the process's copy of current totals
 * (src/domain/usage/committed-usage.ts), which adds them when the transaction commits.
 */
export async function recordAcceptance(
  trx: Transaction<Database>,
  store: RecordStore,
  organizationId: string,
  a: Acceptance,
  broadcast?: BroadcastRows,
): Promise<boolean> {
  const { caps } = store;
  committedUsageOf(store)?.noteWrite(trx, a.counters);
  await addUsageTally(trx, a.counters, caps);
  if (a.apps.size > 0) await upsertAppLabels(trx, organizationId, a.apps, caps);
  if (a.users.size > 0) await upsertUserLabels(trx, organizationId, a.users, caps);
  await bumpActivityVersion(trx, organizationId);
  if (broadcast === undefined) return false;
  return enqueueBroadcast(trx, organizationId, broadcast.ids, broadcast.payload, broadcast.offer);
}
