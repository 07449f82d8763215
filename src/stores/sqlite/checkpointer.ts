import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** How often the checkpointer copies committed WAL frames into the database file. */
export const CHECKPOINT_INTERVAL_MS = 1_000;
/**
 * WAL frames (pages) past which the store's own connection checkpoints in a commit, as SQLite does
 * by default at 1,000: the bound on the WAL when the checkpointer is behind or gone. With the
 * checkpointer keeping up, the WAL restarts long before (see below) and this never triggers.
 */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 4_000;

/*
 * The checkpointer's thread: its own connection to the file, a PASSIVE checkpoint every interval
 * (it waits for no reader or writer and takes no write lock, so the store's commits go on), with
 * the file synced as the store's connection would (synchronous=NORMAL syncs at checkpoints).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("synchronous = NORMAL");
db.pragma("wal_autocheckpoint = 0");
const timer = setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message ? err.message : err) });
  }
}, workerData.intervalMs);
parentPort.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Stops the thread (its connection closed) once its checkpoint in progress, if any, ends. */
  close(): Promise<void>;
}

/**
 * Checkpoints of a SQLite file in WAL mode on a thread of their own. By default SQLite checkpoints
 * inside the commit that takes the WAL past 1,000 pages: on the event loop's thread, every few
 * dozen to few hundred model requests, a commit then copied ~4 MiB into the database file and
 * synced it, and the request it belonged to (and every request queued behind it) waited
 * milliseconds (docs/performance.md). Here a worker copies the committed frames every
 * CHECKPOINT_INTERVAL_MS; once they are all copied, the store's next write starts the WAL over
 * from its beginning, so the WAL stays small and the store's connection (wal_autocheckpoint raised
 * to FALLBACK_AUTOCHECKPOINT_PAGES) does not checkpoint itself. Nothing waits for the thread to
 * start (~30 ms): should it fail, then or later, that fallback still bounds the WAL, and `onError`
 * hears why.
 */
export function startCheckpointer(file: string, onError: (message: string) => void): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      module: createRequire(import.meta.url).resolve("better-sqlite3"),
      file,
      intervalMs: CHECKPOINT_INTERVAL_MS,
    },
  });
  let closing = false;
  const exited = new Promise<void>((done) =>
    worker.once("exit", (code) => {
      if (!closing) onError(`the thread stopped (exit code ${code})`);
      done();
    }),
  );
  worker.on("message", (m: { error?: string }) => {
    if (m.error) onError(m.error);
  });
  // What a thread's uncaught exception arrives as is not always an Error with a message.
  worker.on("error", (err: unknown) =>
    onError(err instanceof Error && err.message ? err.message : String(err)),
  );
  // The thread must not keep a process alive that has nothing else to do.
  worker.unref();
  return {
    close: async () => {
      closing = true;
      // Held again while it stops: a process waiting only for this must not exit meanwhile.
      worker.ref();
      worker.postMessage("close");
      await exited;
    },
  };
}
