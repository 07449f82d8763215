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

/**
 * Held for the life of the process on a dedicated PostgreSQL connection (a session advisory lock:
 * released when the process or its connection ends). An instance with an embedded DuckDB activity
 * store takes it exclusively, an instance with ClickHouse shares it: so a second instance on the
 * same record store refuses to start when either of them keeps analytics in a file of its own.
 * Needs session semantics (a direct connection or session pooling).
 */
export async function holdActivityStoreLock(
  url: string,
  embedded: boolean,
): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
    application_name: "gatehouse-instance-lock",
  });
  client.on("error", () => undefined);
  await client.connect();
  const fn = embedded ? "pg_try_advisory_lock" : "pg_try_advisory_lock_shared";
  const r = await client.query<{ ok: boolean }>(`select ${fn}(hashtextextended($1, 0)) as ok`, [LOCK_NAME]);
  if (r.rows[0]?.ok !== true) {
    await client.end().catch(() => undefined);
    throw new SplitAnalyticsError(
      embedded
        ? `another Gatehouse instance is running on this DATABASE_URL, and this one has no CLICKHOUSE_URL ` +
            `(its analytics would live in its own DuckDB file): ${ADVICE}`
        : `another Gatehouse instance on this DATABASE_URL keeps analytics in its own embedded DuckDB file ` +
            `(no CLICKHOUSE_URL): ${ADVICE}`,
    );
  }
  return { release: () => client.end().catch(() => undefined) };
}
