import { join } from "node:path";
import type { RecordStore } from "./record-store.js";
import { openPostgresStore } from "./postgres/open-postgres.js";
import { openSqliteStore } from "./sqlite/open-sqlite.js";

/** DATABASE_URL selects PostgreSQL; otherwise an embedded SQLite file in the data directory. */
export function openRecordStore(opts: { databaseUrl: string | null; dataDir: string }): Promise<RecordStore> {
  return opts.databaseUrl
    ? openPostgresStore(opts.databaseUrl)
    : openSqliteStore(join(opts.dataDir, "gatehouse.sqlite"));
}
