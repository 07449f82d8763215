/**
 * Orders the ingest batches of one single-writer activity store against recovery of in-flight
 * markers (recover-inflight.ts): batches run concurrently with each other, recovery runs alone
 * (once the batches in flight have finished, before any new one starts). Recovery is due when the
 * gate is created (a previous process may have died mid-batch) and after any batch that failed
 * once its activity commit had begun.
 */
export class IngestGate {
  private active = 0;
  private drained: (() => void)[] = [];
  private recovering: Promise<void> | null = null;
  private recoveryDue = true;
  /** Outcomes of batches between their activity commit and their record-store commit. */
  private readonly committing = new Set<Promise<void>>();

  /** Waits for recovery when it is due (running it if nobody is), then counts the batch in. */
  async enter(recover: () => Promise<unknown>): Promise<void> {
    for (;;) {
      if (this.recovering) {
        await this.recovering.catch(() => undefined);
        continue;
      }
      if (!this.recoveryDue) {
        this.active += 1;
        return;
      }
      const run = this.recover(recover);
      this.recovering = run;
      try {
        await run;
      } finally {
        if (this.recovering === run) this.recovering = null;
      }
    }
  }

  /**
   * Runs a batch's activity commit and record-store commit (`commitBoth`, which calls
   * `commitActivity` from inside the record-store transaction). Before committing activity, waits
   * for the batches already committing and refuses when one of them failed: such a batch may have
   * left rows for ids that this batch has just claimed (its claim could only succeed after that
   * batch's transaction ended), and they must be recovered first. A failure once the activity
   * commit has begun makes recovery due.
   */
  async commit<T>(commitBoth: (beforeActivityCommit: () => Promise<void>) => Promise<T>): Promise<T> {
    let done!: () => void;
    const outcome = new Promise<void>((resolve) => (done = resolve));
    let activityCommitStarted = false;
    try {
      return await commitBoth(async () => {
        const others = [...this.committing];
        this.committing.add(outcome);
        activityCommitStarted = true;
        await Promise.all(others);
        if (this.recoveryDue) {
          throw new Error("ingest: a concurrent batch failed after its activity write; retry this batch");
        }
      });
    } catch (err) {
      if (activityCommitStarted) this.recoveryDue = true;
      throw err;
    } finally {
      this.committing.delete(outcome);
      done();
    }
  }

  /** Counts the batch out. */
  leave(): void {
    this.active -= 1;
    if (this.active === 0) for (const drained of this.drained.splice(0)) drained();
  }

  private async recover(recover: () => Promise<unknown>): Promise<void> {
    while (this.active > 0) await new Promise<void>((drained) => this.drained.push(drained));
    await recover();
    this.recoveryDue = false;
  }
}
