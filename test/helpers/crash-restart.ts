import { randomBytes } from "node:crypto";
import { killServer, startServer, stopServer, tempDataDir, type ChildServer } from "./child-server.js";

/** A fresh management key in the product's format, for GATEHOUSE_BOOTSTRAP_KEY. */
export const newBootstrapKey = (): string => `sk-gh-v1-${randomBytes(32).toString("hex")}`;

/** An hour ago, to the second, as ingest's `created_at` takes it. */
export const anHourAgo = (): string => new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");

/**
 * The compiled server on one data directory, killed with SIGKILL mid-work and started again on
 * the same data, as a crash and the operator's restart would. `start()` launches it (again) with
 * the bootstrap key `key` and the management rate limit out of the way; `kill()` is the crash,
 * `stop()` the clean SIGTERM. The test's file still calls `afterAll(killAll)`.
 */
export interface CrashableServer {
  dataDir: string;
  /** The bootstrap management key, the same across restarts. */
  key: string;
  /** SIGKILLs so far. */
  readonly kills: number;
  start(): Promise<ChildServer>;
  /** SIGKILL `s` and wait for its exit. */
  kill(s: ChildServer): Promise<void>;
  /**
   * SIGKILL `s` after `ms`: `killed()` says whether it has been; `now()` kills it at once if the
   * timer has not yet, and resolves once the process is gone.
   */
  killAfter(s: ChildServer, ms: number): { killed(): boolean; now(): Promise<void> };
  stop(s: ChildServer): Promise<unknown>;
}

/** A crashable server on a new temporary data directory; `env` is added to each start's. */
export function crashableServer(env: Record<string, string> = {}): CrashableServer {
  const dataDir = tempDataDir();
  const key = newBootstrapKey();
  let kills = 0;
  const kill = async (s: ChildServer) => {
    kills += 1;
    await killServer(s);
  };
  return {
    dataDir,
    key,
    get kills() {
      return kills;
    },
    start: () =>
      startServer({
        GATEHOUSE_DATA_DIR: dataDir,
        GATEHOUSE_BOOTSTRAP_KEY: key,
        RATE_LIMIT_MANAGEMENT_MAX: "1000000",
        ...env,
      }),
    kill,
    killAfter: (s, ms) => {
      let killed = false;
      let done: Promise<void> | undefined;
      const now = () => {
        clearTimeout(timer);
        if (!killed) {
          killed = true;
          done = kill(s);
        }
        return done!;
      };
      const timer = setTimeout(() => void now(), ms);
      return { killed: () => killed, now };
    },
    stop: (s) => stopServer(s),
  };
}
