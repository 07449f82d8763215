import { decodeEntry, encodeEntry } from "./journal.js";
import {
  recordEach,
  type JournaledGeneration,
  type RecordingDeps,
  type Refused,
} from "./record-generation.js";

/**
 * Records that failed after their answer, kept in memory for a retry at most (about 1 KiB each):
 * past it, a journaled one waits in the journal for the next start's replay, a deferred one is
 * lost (and logged).
 */
export const FAILED_KEPT_MAX = 10_000;

/**
 * The records that failed after their answer was sent (a record store busy past its timeout, a
 * moment's failure), tried again by the gateway's pass (gateway.ts) until they are committed:
 * the journaled ones (durable recording on SQLite) and the deferred ones alike. Each is kept as a
 * journal entry holds it, without its Broadcast-only content (prompt, completion, parameters), so
 * a retried record reaches Broadcast without them, as one replayed at start does.
 */
export class FailedRecords {
  private readonly records = new Map<string, JournaledGeneration>();

  /** Keeps a record for `retry`, unless FAILED_KEPT_MAX are kept already. */
  add(g: JournaledGeneration): void {
    if (this.records.size < FAILED_KEPT_MAX) this.records.set(g.id, decodeEntry(encodeEntry(g)) ?? g);
  }

  /** Records waiting for `retry`. */
  get size(): number {
    return this.records.size;
  }

  /**
   * Records them again (recordEach): those recorded or refused are forgotten, and `done` is told
   * (the journal releases them); on any other failure it throws, and the rest wait for the next
   * call.
   */
  async retry(
    deps: RecordingDeps,
    refused: Refused,
    done: (ids: string[]) => void = () => undefined,
  ): Promise<{ recorded: number; refused: number }> {
    if (this.records.size === 0) return { recorded: 0, refused: 0 };
    return recordEach(deps, [...this.records.values()], refused, (ids) => {
      for (const id of ids) this.records.delete(id);
      done(ids);
    });
  }
}
