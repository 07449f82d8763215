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
 * (half open): a success closes it, a failure opens it again.
 */
export class CircuitBreaker {
  private failures = new Map<string, number>();
  private openUntil = new Map<string, number>();

  constructor(
    private readonly threshold: number,
    private readonly cooldownMs: number,
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
    this.failures.delete(id);
    this.openUntil.delete(id);
  }

  failure(id: string, nowMs: number): void {
    const n = (this.failures.get(id) ?? 0) + 1;
    this.failures.set(id, n);
    if (n >= this.threshold) this.openUntil.set(id, nowMs + this.cooldownMs);
  }

  forget(id: string): void {
    this.failures.delete(id);
    this.openUntil.delete(id);
  }
}
