/**
 * What cancels a model request: its client going away, or a shutdown's grace running out. The
 * part of AbortSignal the data plane uses, so an AbortSignal is one too (tests pass them).
 */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * A model request's cancellation: an AbortController and its signal in one small object. Every
 * model request has one, and the upstream call listens on it; Node's AbortSignal is an
 * EventTarget, whose creation and listener bookkeeping took ~7 µs a request in a tight loop on the
 * 2-core VM of docs/performance.md, against 0.2 µs for this (bench/experiments/per-request.ts), and ~2 % of
 * a busy gateway's main thread in a profile. A listener runs once, on the first abort(); one added
 * after it never runs, and one added twice runs once, as with an AbortSignal.
 */
export class Cancellation implements CancelSignal {
  private fired = false;
  private listeners: (() => void)[] | null = null;

  get aborted(): boolean {
    return this.fired;
  }

  /** Runs every listener once (each even if an earlier one throws; the first error is rethrown). */
  abort(): void {
    if (this.fired) return;
    this.fired = true;
    const listeners = this.listeners;
    this.listeners = null;
    if (!listeners) return;
    let failure: { err: unknown } | null = null;
    for (const listener of listeners) {
      try {
        listener();
      } catch (err) {
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
  }

  /** `once` is how every listener runs anyway. */
  addEventListener(_type: "abort", listener: () => void, _options?: { once?: boolean }): void {
    if (this.fired) return;
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const listeners = this.listeners;
    if (!listeners) return;
    const at = listeners.lastIndexOf(listener);
    if (at >= 0) listeners.splice(at, 1);
  }
}
