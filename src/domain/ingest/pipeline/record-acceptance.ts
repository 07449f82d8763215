import type { Transaction } from "kysely";
import type { RecordStore } from "../../../stores/record-store.js";
import type { Database } from "../../../stores/schema.js";
import { committedUsageOf } from "../../usage/committed-usage.js";
import { addUsageTally, type CounterRow } from "../../usage/ledger.js";
import { bumpActivityVersion } from "../repos/activity-version.js";
import { upsertAppLabels, upsertUserLabels, type UserLabel } from "../repos/labels-repo.js";
import type { AcceptedOffer } from "./accepted-sink.js";

/** What the record store learns about accepted rows (PreparedRows carries it). */
export interface Acceptance {
  counters: readonly CounterRow[];
  apps: ReadonlyMap<number, string>;
  users: ReadonlyMap<string, UserLabel>;
}

/** The accepted rows offered on to the sink: their ids and payload (computed only when needed). */
export interface OfferedRows {
  offer: AcceptedOffer;
  ids: readonly string[];
  payload: () => string;
}

/**
 * Ledger, labels, activity version and (when offered) the accepted-batch sink's writes (Broadcast's
 * outbox row) for accepted rows. Call inside the batch's transaction, `trx` of
 * `store.transaction()`. Resolves to whether the sink wrote anything (then call its written()
 * after the commit). The ledger rows are announced to the process's copy of current totals
 * (src/domain/usage/committed-usage.ts), which adds them when the transaction commits.
 */
export async function recordAcceptance(
  trx: Transaction<Database>,
  store: RecordStore,
  organizationId: string,
  a: Acceptance,
  offered?: OfferedRows,
): Promise<boolean> {
  const { caps } = store;
  committedUsageOf(store)?.noteWrite(trx, a.counters);
  await addUsageTally(trx, a.counters, caps);
  if (a.apps.size > 0) await upsertAppLabels(trx, organizationId, a.apps, caps);
  if (a.users.size > 0) await upsertUserLabels(trx, organizationId, a.users, caps);
  await bumpActivityVersion(trx, organizationId);
  if (offered === undefined) return false;
  const { sink, nowMs, contexts } = offered.offer;
  return sink.accept(trx, { organizationId, ids: offered.ids, payload: offered.payload, nowMs, contexts });
}
