/** What the body asks of the connection it is read from (undici's dispatch controller). */
export interface BodyFlow {
  pause(): void;
  resume(): void;
  abort(reason: Error): void;
}

/** Bytes queued unread before the connection stops reading (pause), and below which it resumes. */
export const HIGH_WATER_BYTES = 64 * 1024;
const LOW_WATER_BYTES = 16 * 1024;

/**
 * An upstream answer's body as the connection delivers it: chunks queued for one reader, read
 * whole (`text`) or chunk by chunk (async iteration), with backpressure: past HIGH_WATER_BYTES
 * unread, the connection stops reading until the reader catches up. A plain queue instead of a
 * Node stream: per request, a stream's machinery cost more CPU than the exchange's HTTP parsing
 * (docs/performance.md).
 *
 * The producer calls `push`, then `end` or `fail`, once. Leaving an iteration early does not
 * touch the connection: the exchange's `close` decides between `drain` and `abort`.
 */
export class UpstreamBody implements AsyncIterable<Buffer> {
  private chunks: Buffer[] = [];
  private queuedBytes = 0;
  private paused = false;
  private done = false;
  private error: Error | null = null;
  private wake: (() => void) | null = null;
  /** Drained: later chunks are dropped, and the connection aborted past this many bytes. */
  private discardLimit = -1;
  private discarded = 0;
  /** Read whole (`text`): nothing is taken before the end, so the connection is never paused. */
  private whole = false;

  constructor(private readonly flow: BodyFlow) {}

  /** Whether the answer has ended, completely or with a failure: the connection is no longer ours. */
  get settled(): boolean {
    return this.done || this.error !== null;
  }

  push(chunk: Buffer): void {
    if (this.discardLimit >= 0) {
      this.discarded += chunk.length;
      if (this.discarded > this.discardLimit) this.flow.abort(new Error("undrained upstream body"));
      return;
    }
    this.chunks.push(chunk);
    this.queuedBytes += chunk.length;
    if (!this.paused && !this.whole && this.queuedBytes >= HIGH_WATER_BYTES) {
      this.paused = true;
      this.flow.pause();
    }
    this.notify();
  }

  end(): void {
    this.done = true;
    this.notify();
  }

  fail(err: Error): void {
    if (this.done) return;
    this.error = err;
    this.notify();
  }

  /**
   * Reads the rest without keeping it, so that a connection whose answer is complete in substance
   * goes back to the pool; past `limit` bytes more it is closed instead.
   */
  drain(limit: number): void {
    this.discardLimit = limit;
    this.chunks = [];
    this.queuedBytes = 0;
    this.resumeIfPaused();
  }

  /** The next chunk; done at the end; throws the connection's failure. */
  async next(): Promise<IteratorResult<Buffer, undefined>> {
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk !== undefined) {
        this.queuedBytes -= chunk.length;
        if (this.queuedBytes < LOW_WATER_BYTES) this.resumeIfPaused();
        return { done: false, value: chunk };
      }
      if (this.error) throw this.error;
      if (this.done) return { done: true, value: undefined };
      await new Promise<void>((woken) => (this.wake = woken));
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer, undefined> {
    return { next: () => this.next() };
  }

  /** The whole body as UTF-8 text (a leading byte-order mark dropped); throws the connection's failure. */
  async text(): Promise<string> {
    // Nothing is taken before the end, so no pause: the idle timeout bounds a body that never ends.
    this.whole = true;
    this.resumeIfPaused();
    while (!this.settled) await new Promise<void>((woken) => (this.wake = woken));
    if (this.error) throw this.error;
    const all = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    this.chunks = [];
    this.queuedBytes = 0;
    const start = all.length >= 3 && all[0] === 0xef && all[1] === 0xbb && all[2] === 0xbf ? 3 : 0;
    return all.toString("utf8", start);
  }

  private resumeIfPaused(): void {
    if (!this.paused) return;
    this.paused = false;
    this.flow.resume();
  }

  private notify(): void {
    const wake = this.wake;
    if (!wake) return;
    this.wake = null;
    wake();
  }
}
