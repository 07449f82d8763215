import { readFileSync } from "node:fs";

/**
 * Where a window's wall time went, from Linux's scheduler counters: for a server's main thread
 * (the event loop), the share it ran on a CPU and the share it was ready to run but waited for
 * one (`/proc/<pid>/task/<pid>/schedstat`: ns on a CPU, ns on a run queue); for the machine, the
 * share of all CPUs' time that was idle (`/proc/stat`). Running + waiting near 100 % means the
 * event loop is the bottleneck; waiting while the machine is partly idle means the other
 * processes took the CPUs when it needed one.
 */
export interface CpuShare {
  /** % of the window the main thread was on a CPU. */
  running: number;
  /** % of the window the main thread was ready to run and waited for a CPU. */
  waiting: number;
  /** % of all CPUs' time the machine was idle (idle + iowait). */
  machineIdle: number;
}

interface Snapshot {
  at: number;
  run: number;
  wait: number;
  ticks: number[];
}

function schedstat(pid: number): [number, number] | null {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ").map(Number);
    return [run ?? 0, wait ?? 0];
  } catch {
    return null;
  }
}

/** The machine's CPU counters (the first line of /proc/stat), or null without /proc. */
export function cpuTicks(): number[] | null {
  try {
    return (readFileSync("/proc/stat", "utf8").split("\n")[0] as string).split(/\s+/).slice(1).map(Number);
  } catch {
    return null;
  }
}

/** The idle share (idle + iowait, %) of the CPU time between two cpuTicks() readings. */
export function idleShare(before: number[], after: number[]): number {
  const d = after.map((v, i) => v - (before[i] ?? 0));
  const total = d.reduce((a, b) => a + b, 0);
  return total > 0 ? (100 * ((d[3] ?? 0) + (d[4] ?? 0))) / total : 0;
}

/** Starts a window on `pid`'s main thread; the returned function ends it (null without /proc). */
export function cpuShareWindow(pid: number): () => CpuShare | null {
  const start = schedstat(pid);
  const ticks = cpuTicks();
  const before: Snapshot | null =
    start && ticks ? { at: performance.now(), run: start[0], wait: start[1], ticks } : null;
  return () => {
    const end = schedstat(pid);
    const ticksAfter = cpuTicks();
    if (!before || !end || !ticksAfter) return null;
    const wallNs = (performance.now() - before.at) * 1e6;
    return {
      running: (100 * (end[0] - before.run)) / wallNs,
      waiting: (100 * (end[1] - before.wait)) / wallNs,
      machineIdle: idleShare(before.ticks, ticksAfter),
    };
  };
}
