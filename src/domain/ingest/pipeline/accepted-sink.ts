import type { LiveContext } from "../../../broadcast/live-context.js";
import type { Db } from "../../../stores/record-store.js";

/** A batch ingest accepted, as handed on inside its acceptance transaction. */
export interface AcceptedBatch {
  organizationId: string;
  /** The accepted generations' ids (duplicates left out). */
  ids: readonly string[];
  /** Their rows as ingest column texts (src/stores/column-texts.ts), computed only when called. */
  payload: () => string;
  /** When the batch was accepted (epoch ms). */
  nowMs: number;
  /** Served content and request details by generation id (the gateway's); absent ids have none. */
  contexts: ReadonlyMap<string, LiveContext> | null;
}

/**
 * What happens after ingest accepts a batch offered on (IngestOptions.broadcast): ingest's port,
 * implemented by Broadcast's outbox (src/broadcast/outbox/outbox-sink.ts) and wired by the
 * composition root (src/main.ts, the CLI's with-stores.ts), so that ingest imports nothing of the
 * layers above it.
 */
export interface AcceptedSink {
  /**
   * Inside the acceptance transaction `trx`: writes what must commit with the batch (or not at
   * all). Resolves to whether it wrote anything.
   */
  accept(trx: Db, batch: AcceptedBatch): Promise<boolean>;
  /** After the commit of a transaction in which accept() wrote: wakes whoever reads it, at once. */
  written(): void;
}

/** How one ingest call hands its accepted batch on: the sink, and what the batch carries besides its rows. */
export interface AcceptedOffer {
  sink: AcceptedSink;
  nowMs: number;
  contexts: ReadonlyMap<string, LiveContext> | null;
}
