import type { Cancellation } from "./cancellation.js";

/**
 * The model requests this instance is serving, so a shutdown can let them finish and, past a grace
 * period, cancel the rest through the same path as a client that disconnects: the upstream call is
 * aborted, what was generated is charged and recorded, and the holds are settled. Without it a
 * stream that outlives the shutdown would be cut by the process exit, its usage never recorded.
 */
export class InFlight {
  private readonly requests = new Set<Cancellation>();
  private idle: (() => void) | null = null;

  get size(): number {
    return this.requests.size;
  }

  /** Tracks one request; `cancel` is aborted if the drain's grace runs out. Returns the untrack step. */
  track(cancel: Cancellation): () => void {
    this.requests.add(cancel);
    return () => {
      this.requests.delete(cancel);
      if (this.requests.size === 0) this.idle?.();
    };
  }

  /**
   * Resolves once every tracked request has ended. Those still running after `graceMs` are
   * cancelled; the wait for them to settle after that is bounded by `settleMs`.
   */
  async drain(graceMs: number, settleMs = 5_000): Promise<{ cancelled: number }> {
    if (this.requests.size === 0) return { cancelled: 0 };
    const empty = new Promise<void>((done) => (this.idle = done));
    let timer: NodeJS.Timeout | undefined;
    const waited = (ms: number) =>
      Promise.race([
        empty.then(() => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms))),
      ]);
    try {
      if (await waited(graceMs)) return { cancelled: 0 };
      clearTimeout(timer);
      const cancelled = this.requests.size;
      for (const c of this.requests) c.abort();
      await waited(settleMs);
      return { cancelled };
    } finally {
      clearTimeout(timer);
      this.idle = null;
    }
  }
}
