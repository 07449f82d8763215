/** A Retry-After longer than this is read as this (a receiver cannot park a queue for days). */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * Exponential backoff with full jitter: the n-th retry (n >= 1) waits a uniform random time in
 * [0, min(maxMs, baseMs * 2^(n-1))]. A Retry-After from the receiver is honoured: the wait is at
 * least that long (up to MAX_RETRY_AFTER_MS).
 */
export function backoffMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  retryAfter: number | null,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 40));
  const jittered = Math.floor(random() * ceiling);
  return retryAfter === null ? jittered : Math.max(jittered, Math.min(retryAfter, MAX_RETRY_AFTER_MS));
}

/**
 * A circuit breaker per destination, in the memory of one process: after `threshold` failed sends
 * in a row it opens for `cooldownMs` (no claims for that destination), then lets one claim through
 * (half open): a success closes it, a failure opens it again. What it knows of a destination that
 * has not failed for `staleMs` (and is not open) is dropped by `prune`: a deleted destination
 * leaves nothing behind, and failures that long ago no longer count toward opening.
 */
export class CircuitBreaker {
  private failures = new Map<string, { count: number; lastMs: number }>();
  private openUntil = new Map<string, number>();

  constructor(
    private readonly threshold: number,
    private readonly cooldownMs: number,
    private readonly staleMs = Math.max(10 * cooldownMs, 600_000),
  ) {}

  allows(id: string, nowMs: number): boolean {
    const until = this.openUntil.get(id);
    return until === undefined || nowMs >= until;
  }

  state(id: string, nowMs: number): "closed" | "open" | "half_open" {
    const until = this.openUntil.get(id);
    if (until === undefined) return "closed";
    return nowMs < until ? "open" : "half_open";
  }

  success(id: string): void {
    this.forget(id);
  }

  failure(id: string, nowMs: number): void {
    const count = (this.failures.get(id)?.count ?? 0) + 1;
    this.failures.set(id, { count, lastMs: nowMs });
    if (count >= this.threshold) this.openUntil.set(id, nowMs + this.cooldownMs);
  }

  /**
   * The receiver asked for quiet (Retry-After): no claims for the destination until `untilMs`
   * (at most MAX_RETRY_AFTER_MS from now), then one probe, as after a cooldown.
   */
  hold(id: string, nowMs: number, untilMs: number): void {
    const until = Math.min(untilMs, nowMs + MAX_RETRY_AFTER_MS);
    if (until > (this.openUntil.get(id) ?? 0)) this.openUntil.set(id, until);
    if (!this.failures.has(id)) this.failures.set(id, { count: 0, lastMs: nowMs });
  }

  forget(id: string): void {
    this.failures.delete(id);
    this.openUntil.delete(id);
  }

  /** Drops destinations whose last failure is older than staleMs and that are not open. */
  prune(nowMs: number): void {
    for (const [id, f] of this.failures) {
      if (nowMs - f.lastMs >= this.staleMs && this.allows(id, nowMs)) this.forget(id);
    }
  }

  /** Destinations it holds anything for (tests and diagnostics). */
  get size(): number {
    return this.failures.size;
  }
}
