/**
 * Background passes of one kind in one process: they take turns (never two at once), run now and
 * then every interval until stopped, and report their failures instead of throwing them (the work
 * they did not do is left for the next pass). A slow pass is not stacked on. The timer does not
 * keep the process alive.
 */
export class PeriodicPass {
  private turn: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private background: Promise<unknown> | null = null;
  private readonly failureListeners: ((err: unknown) => void)[] = [];

  constructor(private readonly intervalMs: number) {}

  /** Where a failed pass is reported (the app's logger). */
  onFailure(listener: (err: unknown) => void): void {
    this.failureListeners.push(listener);
  }

  report(err: unknown): void {
    for (const l of this.failureListeners) l(err);
  }

  /** Runs fn once the pass before it (of any caller) has ended. */
  inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs `pass` now, then every interval until stop(); failures are reported. Resolves once the
   * first run has ended.
   */
  async start(pass: () => Promise<unknown>): Promise<void> {
    if (this.timer) return;
    const run = () => {
      this.background ??= pass()
        .catch((err: unknown) => this.report(err))
        .finally(() => (this.background = null));
      return this.background;
    };
    this.timer = setInterval(() => void run(), this.intervalMs);
    this.timer.unref();
    await run();
  }

  /** Stops the timer and waits for the pass in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.background;
    await this.turn;
  }
}
