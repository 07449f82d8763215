import {
  recordBatch,
  recordGeneration,
  type RecordingDeps,
  type ServedGeneration,
} from "./record-generation.js";

/** Generations per ingest batch at most (ingest is built for batches of about this size). */
export const MAX_RECORD_BATCH = 1_000;

interface Queued {
  g: ServedGeneration;
  /** When it was queued (performance.now()). */
  at: number;
  /** Its place in the queue's order (1, 2, ...). */
  seq: number;
  done: () => void;
  fail: (err: unknown) => void;
}

export interface RecorderOptions {
  /**
   * How long the oldest queued generation may wait for others to join its flush, in ms; 0 (the
   * default) flushes at once. Only for answers that do not wait for their record
   * (GATEHOUSE_RECORDING=deferred): the cost of a flush is mostly per batch, so gathering ~10 ms
   * of traffic cuts the recording's CPU per request (docs/performance.md). A read that waits for
   * the records (`settled`), a full batch, and `close` end the wait at once.
   */
  gatherMs?: number;
  /**
   * For answers that wait for their record (durable): how long a flush may wait for requests
   * still in flight on this instance (`inFlight`, minus those already queued) to join it, in ms;
   * 0 (the default) never waits. It waits only while such requests exist, as PostgreSQL's
   * commit_delay applies only with commit_siblings: a lone request is recorded at once, and under
   * load a flush takes the requests finishing together instead of one or two of them.
   */
  commitDelayMs?: number;
  /** Model requests in flight on this instance, the queued ones included (commitDelayMs). */
  inFlight?: () => number;
  /** Queued records from which `backlogged()` is true (default: MAX_RECORD_BATCH). */
  maxQueued?: number;
}

/**
 * Group commit for the gateway's generations. `record` queues a finished generation and resolves
 * once it is stored (ingest committed, detail row written). When no flush is running, a flush
 * starts at once, or after `gatherMs` (an idle gateway without it records each answer alone and
 * immediately); while one runs, generations queue, and the next flush takes everything queued:
 * one ingest batch per
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
  private readonly gatherMs: number;
  private readonly commitDelayMs: number;
  private readonly inFlight: () => number;
  private readonly maxQueued: number;
  /** Ends the current gathering wait early (null when not waiting). */
  private endGathering: (() => void) | null = null;
  private closing = false;
  /** A flush is waiting for the requests in flight (commitDelayMs). */
  private awaitingSiblings = false;

  constructor(
    private readonly deps: RecordingDeps,
    opts: RecorderOptions = {},
  ) {
    this.gatherMs = opts.gatherMs ?? 0;
    this.commitDelayMs = opts.commitDelayMs ?? 0;
    this.inFlight = opts.inFlight ?? (() => 0);
    this.maxQueued = opts.maxQueued ?? MAX_RECORD_BATCH;
  }

  record(g: ServedGeneration): Promise<void> {
    return new Promise<void>((done, fail) => {
      this.queue.push({ g, at: performance.now(), seq: ++this.queuedSeq, done, fail });
      this.flushing ??= this.run();
      if (this.waitIsOver()) this.endGathering?.();
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
    const waiting = new Promise<void>((done) => this.waiters.push({ through, done }));
    this.endGathering?.();
    return waiting;
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

  /**
   * Whether an answer that need not wait for its record should wait anyway (deferred recording):
   * `maxQueued` records or more are queued, so the record store is behind. Answers then follow
   * their commits until it catches up, which bounds what the queue holds in memory.
   */
  backlogged(): boolean {
    return this.queue.length >= this.maxQueued;
  }

  /** Resolves once every generation queued before (and during) the call is stored or failed. */
  async close(): Promise<void> {
    this.closing = true;
    this.endGathering?.();
    while (this.flushing) await this.flushing;
  }

  /** Requests in flight that have not queued their generation yet. */
  private siblings(): number {
    return this.inFlight() - this.queue.length;
  }

  /** Whether nothing may wait: shutdown, a read waiting for the records, a full batch. */
  private mustFlush(): boolean {
    return this.closing || this.waiters.length > 0 || this.queue.length >= MAX_RECORD_BATCH;
  }

  /** Whether a wait in progress may end now: nothing may wait, or every sibling has queued. */
  private waitIsOver(): boolean {
    return this.mustFlush() || (this.awaitingSiblings && this.siblings() <= 0);
  }

  /** Waits until the oldest queued generation is gatherMs old, unless something needs it sooner. */
  private async gather(): Promise<void> {
    const oldest = this.queue[0];
    if (!oldest || this.mustFlush()) return;
    await this.waitFor(oldest.at + this.gatherMs - performance.now());
  }

  /** Waits up to commitDelayMs for the requests in flight to queue theirs (see RecorderOptions). */
  private async gatherSiblings(): Promise<void> {
    if (this.queue.length === 0 || this.mustFlush()) return;
    // One turn of the event loop first: the requests whose records the last flush stored leave
    // the in-flight count in the microtasks that follow it, and must not count as siblings.
    await new Promise<void>((done) => setImmediate(done));
    if (this.mustFlush() || this.siblings() <= 0) return;
    this.awaitingSiblings = true;
    try {
      await this.waitFor(this.commitDelayMs);
    } finally {
      this.awaitingSiblings = false;
    }
  }

  /** Sleeps `ms`, or less if endGathering is called meanwhile. */
  private async waitFor(ms: number): Promise<void> {
    if (ms <= 0) return;
    await new Promise<void>((done) => {
      const timer = setTimeout(() => this.endGathering?.(), ms);
      this.endGathering = () => {
        clearTimeout(timer);
        this.endGathering = null;
        done();
      };
    });
  }

  private async run(): Promise<void> {
    try {
      // One microtask: answers finishing in the same turn join the first flush.
      await Promise.resolve();
      while (this.queue.length > 0) {
        if (this.gatherMs > 0) await this.gather();
        else if (this.commitDelayMs > 0) await this.gatherSiblings();
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
