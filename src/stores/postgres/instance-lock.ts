import pg from "pg";

/** The advisory lock that says which activity store the instances on one record store use. */
const LOCK_NAME = "gatehouse:activity-store";

export class SplitAnalyticsError extends Error {
  override readonly name = "SplitAnalyticsError";
}

const ADVICE =
  "instances that share a DATABASE_URL must share the activity store: set CLICKHOUSE_URL on every " +
  "instance (docs/scaling.md), or run a single instance. GATEHOUSE_ALLOW_SPLIT_ANALYTICS=true starts " +
  "anyway, each instance then answering analytics for what it ingested only.";

/** What happens to the lock after the start: for the server's log. */
export type InstanceLockEvent =
  /** Its connection ended (PostgreSQL restarted, a failover, a network cut): the lock is free. */
  | { kind: "lost" }
  /** Taken again on a new connection. */
  | { kind: "regained" }
  /**
   * Another instance took it meanwhile, in a way this one cannot share (reported once per loss,
   * then retried quietly): analytics may now be split between the two.
   */
  | { kind: "contested"; message: string };

export interface InstanceLockOptions {
  /** The first retry after a loss, doubled up to maxRetryMs. Default 1 s. */
  retryMs?: number;
  /** Default 30 s. */
  maxRetryMs?: number;
  onEvent?: (event: InstanceLockEvent) => void;
}

export interface InstanceLock {
  /** Whether this process holds the lock now (false between a loss and its retaking). */
  readonly held: boolean;
  release(): Promise<void>;
}

/**
 * Held for the life of the process on a dedicated PostgreSQL connection (a session advisory lock:
 * released when the process or its connection ends). An instance with an embedded DuckDB activity
 * store takes it exclusively, an instance with ClickHouse shares it: so a second instance on the
 * same record store refuses to start when either of them keeps analytics in a file of its own.
 * Needs session semantics (a direct connection or session pooling).
 *
 * A lock whose connection ends while the process runs (a PostgreSQL restart frees every session
 * lock) is taken again on a new connection, retried with backoff until it is: otherwise the guard
 * would be gone after the first restart, and a misconfigured second instance would start
 * unchecked. Refused at the start: SplitAnalyticsError, as before.
 */
export async function holdActivityStoreLock(
  url: string,
  embedded: boolean,
  opts: InstanceLockOptions = {},
): Promise<InstanceLock> {
  const retryMs = opts.retryMs ?? 1_000;
  const maxRetryMs = opts.maxRetryMs ?? 30_000;
  let client = await take(url, embedded);
  let held = true;
  let released = false;
  let timer: NodeJS.Timeout | null = null;

  const retry = (delay: number, contestedSaid: boolean): void => {
    timer = setTimeout(() => {
      timer = null;
      if (released) return;
      take(url, embedded).then(
        async (c) => {
          if (released) return void (await c.end().catch(() => undefined));
          client = c;
          held = true;
          watch(c);
          opts.onEvent?.({ kind: "regained" });
        },
        (err: unknown) => {
          const contested = err instanceof SplitAnalyticsError;
          if (contested && !contestedSaid) opts.onEvent?.({ kind: "contested", message: err.message });
          retry(Math.min(delay * 2, maxRetryMs), contestedSaid || contested);
        },
      );
    }, delay);
    timer.unref();
  };
  const watch = (c: pg.Client): void => {
    c.once("end", () => {
      if (released) return;
      held = false;
      opts.onEvent?.({ kind: "lost" });
      retry(retryMs, false);
    });
  };
  watch(client);

  return {
    get held() {
      return held;
    },
    release: async () => {
      released = true;
      if (timer) clearTimeout(timer);
      held = false;
      await client.end().catch(() => undefined);
    },
  };
}

/** A new connection holding the lock, or the reason it could not (SplitAnalyticsError: taken). */
async function take(url: string, embedded: boolean): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
    application_name: "gatehouse-instance-lock",
  });
  // A lost connection also ends the client ("end", watched above); the error itself says no more.
  client.on("error", () => undefined);
  let ok: boolean;
  try {
    await client.connect();
    const fn = embedded ? "pg_try_advisory_lock" : "pg_try_advisory_lock_shared";
    const r = await client.query<{ ok: boolean }>(`select ${fn}(hashtextextended($1, 0)) as ok`, [LOCK_NAME]);
    ok = r.rows[0]?.ok === true;
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  if (!ok) {
    await client.end().catch(() => undefined);
    throw new SplitAnalyticsError(
      embedded
        ? `another Gatehouse instance is running on this DATABASE_URL, and this one has no CLICKHOUSE_URL ` +
            `(its analytics would live in its own DuckDB file): ${ADVICE}`
        : `another Gatehouse instance on this DATABASE_URL keeps analytics in its own embedded DuckDB file ` +
            `(no CLICKHOUSE_URL): ${ADVICE}`,
    );
  }
  return client;
}
