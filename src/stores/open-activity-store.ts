import { join } from "node:path";
import type { ActivityStore } from "./activity-store.js";
import type { CompactionSettings } from "./duckdb/duckdb-compaction.js";

/** DuckDB refused to open the file because another process holds it (one process per file). */
export const isActivityLockError = (err: unknown): boolean =>
  err instanceof Error && /could not set lock on file|conflicting lock/i.test(err.message);

/**
 * CLICKHOUSE_URL selects a ClickHouse server; otherwise an embedded DuckDB file in the data
 * directory. Each engine's client is loaded when it is chosen: a CLI command that never opens the
 * activity store, or an installation on the other engine, does not pay for loading it.
 */
export async function openActivityStore(opts: {
  clickhouseUrl: string | null;
  clickhouseDatabase?: string | null;
  dataDir: string;
  duckdb?: { memoryLimit: string | null; threads: number | null };
  activityCompaction?: CompactionSettings;
}): Promise<ActivityStore> {
  if (opts.clickhouseUrl) {
    const { openClickHouseServerStore } = await import("./clickhouse/server-store.js");
    return openClickHouseServerStore({ url: opts.clickhouseUrl, database: opts.clickhouseDatabase ?? null });
  }
  const { openDuckDbActivityStore } = await import("./duckdb/duckdb-store.js");
  return openDuckDbActivityStore({
    path: join(opts.dataDir, "activity.duckdb"),
    ...opts.duckdb,
    ...(opts.activityCompaction ? { compaction: opts.activityCompaction } : {}),
  });
}
