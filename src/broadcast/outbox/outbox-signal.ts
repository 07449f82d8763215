/**
 * In-process wake-up of the Broadcast worker after a transaction wrote to the outbox, so that
 * delivery starts at once rather than at the next poll. Other instances find the rows by polling.
 * One per process, made by the composition root (src/main.ts) and handed to the writers (the
 * accepted-batch sink, replay) and to the Broadcaster that waits on it.
 */
export class OutboxSignal {
  private readonly listeners = new Set<() => void>();

  /** Calls `fn` after every write signalled from now on; returns what stops it. */
  onWrite(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The outbox was written (call after the commit). */
  written(): void {
    for (const fn of this.listeners) fn();
  }
}
