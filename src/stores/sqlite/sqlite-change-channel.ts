import type { PolicyChannel, PolicyChannelHandlers } from "../policy-channel.js";

/** How often the SQLite file is asked whether another process committed to it. */
export const SQLITE_CHANGE_POLL_MS = 250;

/**
 * Policy changes made by another process writing to the same SQLite file (the `gatehouse` CLI
 * while the server runs): SQLite sends no notifications, so the file's `data_version` is polled,
 * and when another connection has committed since, every cached policy is dropped (what changed is
 * not known). The check is one pragma, answered from memory; the server's own commits do not move
 * it, and it is always up.
 */
export function sqliteChangeChannel(
  dataVersion: () => number,
  pollMs = SQLITE_CHANGE_POLL_MS,
): PolicyChannel {
  let timer: NodeJS.Timeout | null = null;
  return {
    subscribe(h: PolicyChannelHandlers) {
      let seen = dataVersion();
      h.up();
      timer = setInterval(() => {
        let now: number;
        try {
          now = dataVersion();
        } catch {
          return; // the store is closing: nothing is cached for long now
        }
        if (now === seen) return;
        seen = now;
        h.unknownChange();
      }, pollMs);
      timer.unref();
    },
    close() {
      if (timer) clearInterval(timer);
      timer = null;
      return Promise.resolve();
    },
  };
}
