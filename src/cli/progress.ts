import cliProgress from "cli-progress";
import type { CliIo } from "./cli-io.js";

/** Where a long command reports how far it got: a bar on a terminal, plain lines otherwise. */
export interface Progress {
  /** done: units of `total` done so far; records: records handled so far (accepted + duplicates). */
  update(done: number, records: number): void;
  stop(): void;
}

export interface ProgressOptions {
  label: string;
  /** What `done` counts toward (bytes of a file, generations of a demo); null when unknown. */
  total: number | null;
  /** Seconds between plain lines when stderr is not a terminal. */
  intervalSeconds?: number;
}

const fmt = (n: number): string => Math.round(n).toLocaleString("en-US");

/**
 * A progress bar (cli-progress) on stderr when stderr is a terminal and the total is known;
 * otherwise one plain line every few seconds (none for a run shorter than that), so that logs of
 * CI jobs and cron runs stay readable.
 */
export function startProgress(io: CliIo, opts: ProgressOptions, nowMs: () => number = Date.now): Progress {
  const started = nowMs();
  const rate = (records: number) => {
    const secs = (nowMs() - started) / 1000;
    return secs > 0 ? records / secs : 0;
  };
  if (io.tty && opts.total !== null && opts.total > 0) {
    const bar = new cliProgress.SingleBar(
      {
        stream: io.tty,
        format: `${opts.label} [{bar}] {percentage}% | {records} records | {rate}/s | ETA {eta_formatted}`,
        barCompleteChar: "\u2588",
        barIncompleteChar: "\u2591",
        hideCursor: true,
        clearOnComplete: false,
        etaBuffer: 50,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(opts.total, 0, { records: "0", rate: "0" });
    return {
      update: (done, records) => bar.update(done, { records: fmt(records), rate: fmt(rate(records)) }),
      stop: () => bar.stop(),
    };
  }
  const everyMs = (opts.intervalSeconds ?? 5) * 1000;
  let last = started;
  return {
    update: (done, records) => {
      const now = nowMs();
      if (now - last < everyMs) return;
      last = now;
      const pct =
        opts.total !== null && opts.total > 0
          ? ` (${Math.min(100, (done / opts.total) * 100).toFixed(1)}%)`
          : "";
      io.err(`${opts.label}: ${fmt(records)} records${pct}, ${fmt(rate(records))} records/s\n`);
    },
    stop: () => undefined,
  };
}
