import { join } from "node:path";
import type { ActivityStore } from "./activity-store.js";
import { openClickHouseServerStore } from "./clickhouse/server-store.js";
import type { CompactionSettings } from "./duckdb/duckdb-compaction.js";
import { openDuckDbActivityStore } from "./duckdb/duckdb-store.js";

/** DuckDB refused to open the file because another process holds it (one process per file). */
export const isActivityLockError = (err: unknown): boolean =>
  err instanceof Error && /could not set lock on file|conflicting lock/i.test(err.message);

/** CLICKHOUSE_URL selects a ClickHouse server; otherwise an embedded DuckDB file in the data directory. */
export function openActivityStore(opts: {
  clickhouseUrl: string | null;
  clickhouseDatabase?: string | null;
  dataDir: string;
  duckdb?: { memoryLimit: string | null; threads: number | null };
  activityCompaction?: CompactionSettings;
}): Promise<ActivityStore> {
  return opts.clickhouseUrl
    ? openClickHouseServerStore({ url: opts.clickhouseUrl, database: opts.clickhouseDatabase ?? null })
    : openDuckDbActivityStore({
        path: join(opts.dataDir, "activity.duckdb"),
        ...opts.duckdb,
        ...(opts.activityCompaction ? { compaction: opts.activityCompaction } : {}),
      });
}
