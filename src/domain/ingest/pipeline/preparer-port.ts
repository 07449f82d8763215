import {
  checkRecords,
  type Batch,
  normaliseBatch,
  preparedRowsOf,
  type PreparedRows,
  type RefsNeeded,
  type ResolvedRefs,
} from "../records/normalise-batch.js";
import type { IngestInput } from "../records/read-body.js";

/** Looks up, in the record store, what a batch references. */
export type Resolve = (refs: RefsNeeded) => Promise<ResolvedRefs>;

/** A batch ready for the single-writer ingest path (ingest-generations.ts). */
export interface PreparedBatch extends PreparedRows {
  /** The same for only these ids (a batch that overlaps ids accepted before). */
  subset(ids: ReadonlySet<string>): Promise<PreparedRows>;
  /** Forgets the batch (a worker keeps it until then). Idempotent. */
  release(): void;
}

/**
 * Turns an ingest body into a PreparedBatch: parse, validate, resolve references (the callback,
 * on the caller's thread), normalise, tally the ledger, encode the rows. Throws the request's
 * DomainError (400 listing every problem, 413). Inline (this thread) or on a pool of worker
 * threads (prepare-pool.ts), with the same code and the same answers.
 */
export interface BatchPreparer {
  prepare(
    input: IngestInput,
    organizationId: string,
    nowMs: number,
    resolve: Resolve,
  ): Promise<PreparedBatch>;
  close(): Promise<void>;
}

/** A normalised batch prepared on this thread: its rows tallied and encoded. */
export function preparedBatchOf(batch: Batch): PreparedBatch {
  return {
    ...preparedRowsOf(batch),
    subset: async (ids) => preparedRowsOf(batch, ids),
    release: () => undefined,
  };
}

/** Prepares on the calling thread (CLI import, tests, INGEST_WORKERS=0). */
export const inlinePreparer: BatchPreparer = {
  async prepare(input, organizationId, nowMs, resolve) {
    const checked = checkRecords(input, nowMs);
    return preparedBatchOf(normaliseBatch(checked, organizationId, await resolve(checked.refs)));
  },
  close: async () => undefined,
};
