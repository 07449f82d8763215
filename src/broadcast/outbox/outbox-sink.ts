import type { AcceptedSink } from "../../domain/ingest/pipeline/accepted-sink.js";
import { enqueueBroadcast } from "./enqueue.js";
import type { OutboxSignal } from "./outbox-signal.js";

/**
 * Broadcast's side of ingest's accepted-batch port: an accepted batch offered on becomes an outbox
 * row in its acceptance transaction (enqueue.ts), and `signal` wakes this process's worker once it
 * commits.
 */
export function outboxSink(signal: OutboxSignal): AcceptedSink {
  return {
    accept: (trx, b) =>
      enqueueBroadcast(trx, b.organizationId, b.ids, b.payload, { nowMs: b.nowMs, contexts: b.contexts }),
    written: () => signal.written(),
  };
}
