import { deleteGenerationContentBefore } from "../../domain/generation-content/generation-content-repo.js";
import type { Clock } from "../../lib/clock.js";
import type { Db } from "../../stores/record-store.js";
import { retentionCutoff } from "./logged-content.js";

/** How often the sweep runs: content is past its retention by at most this much before it goes. */
export const CONTENT_SWEEP_INTERVAL_MS = 3_600_000;

/**
 * Deletes logged content older than the retention (GATEHOUSE_CONTENT_RETENTION_DAYS); returns
 * how many generations' content went. Reads never serve content past the retention either
 * (generation-content-lookup.ts), so the sweep only frees the space.
 */
export function sweepGenerationContent(db: Db, now: Date, retentionMs: number): Promise<number> {
  return deleteGenerationContentBefore(db, retentionCutoff(now, retentionMs));
}

export interface ContentSweepOptions {
  db: Db;
  clock: Clock;
  retentionMs: number;
  intervalMs?: number;
  /** A sweep failed (the store was down): it is tried again at the next interval. */
  onError(err: unknown): void;
}

/**
 * Sweeps now and then every interval, until stopped. Every instance sweeps (a delete of rows
 * another instance already deleted deletes nothing); the timer does not keep the process alive.
 */
export function startContentSweep(o: ContentSweepOptions): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const sweep = () => {
    if (running) return; // a slow sweep is not stacked on
    running = sweepGenerationContent(o.db, o.clock.now(), o.retentionMs)
      .catch((err: unknown) => o.onError(err))
      .finally(() => (running = null));
  };
  sweep();
  const timer = setInterval(sweep, o.intervalMs ?? CONTENT_SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
