import { recordBatch, recordGeneration, type RecordingDeps, type ServedGeneration } from "./recording.js";

/** Generations per ingest batch at most (ingest is built for batches of about this size). */
export const MAX_RECORD_BATCH = 1_000;

interface Queued {
  g: ServedGeneration;
  /** Its place in the queue's order (1, 2, ...). */
  seq: number;
  done: () => void;
  fail: (err: unknown) => void;
}

/**
 * Group commit for the gateway's generations. `record` queues a finished generation and resolves
 * once it is stored (ingest committed, detail row written). When no flush is running, a flush
 * starts at once (no timer: an idle gateway records each answer alone and immediately); while one
 * runs, generations queue, and the next flush takes everything queued: one ingest batch per
 * organization (one record-store transaction, one prepare round trip, one ingest-log append) and
 * one multi-row insert of the detail rows, however many requests finished meanwhile. A batch that
 * fails is retried record by record (ingest and the detail insert are idempotent by id), so one
 * bad record fails only its own request. `close` waits until everything queued is stored.
 */
export class GenerationRecorder {
  private queue: Queued[] = [];
  private flushing: Promise<void> | null = null;
  /** Flushes run so far, and the generations they stored (tests and diagnostics). */
  flushes = 0;
  recorded = 0;
  /** Generations queued so far, and those stored or failed (all of 1..finished): sequence numbers. */
  private queuedSeq = 0;
  private finishedSeq = 0;
  private readonly waiters: { through: number; done: () => void }[] = [];
  private failureListener: ((err: unknown, generationId: string) => void) | null = null;

  constructor(private readonly deps: RecordingDeps) {}

  record(g: ServedGeneration): Promise<void> {
    return new Promise<void>((done, fail) => {
      this.queue.push({ g, seq: ++this.queuedSeq, done, fail });
      this.flushing ??= this.run();
    });
  }

  /**
   * Resolves once every generation queued before the call is stored or has failed: a read that
   * must include the answers already sent (GATEHOUSE_RECORDING=deferred) waits for this. Free when
   * nothing is queued; under sustained load it waits for those queued before it, not for the
   * queue to run dry.
   */
  settled(): Promise<void> {
    const through = this.queuedSeq;
    if (this.finishedSeq >= through) return Promise.resolve();
    return new Promise<void>((done) => this.waiters.push({ through, done }));
  }

  /** Where a deferred record's failure is reported (the app's logger). */
  onFailure(listener: (err: unknown, generationId: string) => void): void {
    this.failureListener = listener;
  }

  /** Reports a record that failed after its answer was sent (nobody else is left to tell). */
  reportFailure(err: unknown, generationId: string): void {
    this.failureListener?.(err, generationId);
  }

  /** Generations queued and not yet taken by a flush. */
  get queued(): number {
    return this.queue.length;
  }

  /** Resolves once every generation queued before (and during) the call is stored or failed. */
  async close(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async run(): Promise<void> {
    try {
      // One microtask: answers finishing in the same turn join the first flush.
      await Promise.resolve();
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_RECORD_BATCH);
        // flush() settles every entry itself; should it throw anyway, none is left waiting.
        await this.flush(batch).catch((err: unknown) => {
          for (const q of batch) q.fail(err);
        });
        // Batches leave the queue in order: everything up to the last of this one is finished.
        this.finishedSeq = (batch[batch.length - 1] as Queued).seq;
        for (let i = this.waiters.length - 1; i >= 0; i--) {
          const w = this.waiters[i] as { through: number; done: () => void };
          if (w.through <= this.finishedSeq) {
            this.waiters.splice(i, 1);
            w.done();
          }
        }
      }
    } finally {
      this.flushing = null;
    }
  }

  private async flush(batch: Queued[]): Promise<void> {
    this.flushes++;
    const byOrg = new Map<string, Queued[]>();
    for (const q of batch) {
      const org = q.g.key.organizationId;
      const list = byOrg.get(org);
      if (list) list.push(q);
      else byOrg.set(org, [q]);
    }
    for (const [org, list] of byOrg) {
      try {
        await recordBatch(
          this.deps,
          org,
          list.map((q) => q.g),
        );
        this.recorded += list.length;
        for (const q of list) q.done();
      } catch {
        // Alone, each record succeeds or fails on its own (ids make the retry idempotent).
        for (const q of list) {
          try {
            await recordGeneration(this.deps, q.g);
            this.recorded++;
            q.done();
          } catch (err) {
            q.fail(err);
          }
        }
      }
    }
  }
}
