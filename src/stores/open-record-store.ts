import { join } from "node:path";
import type { RecordStore } from "./record-store.js";

/**
 * DATABASE_URL selects PostgreSQL; otherwise an embedded SQLite file in the data directory. The
 * chosen store's driver is loaded here, not at start-up (the CLI starts once per command).
 */
export async function openRecordStore(opts: {
  databaseUrl: string | null;
  dataDir: string;
}): Promise<RecordStore> {
  if (opts.databaseUrl) {
    const { openPostgresStore } = await import("./postgres/open-postgres.js");
    return openPostgresStore(opts.databaseUrl);
  }
  const { openSqliteStore } = await import("./sqlite/open-sqlite.js");
  return openSqliteStore(join(opts.dataDir, "gatehouse.sqlite"));
}
