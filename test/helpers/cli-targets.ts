import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { PG_SKIP_REASON, PG_URL, freshPostgresDatabase } from "./stores.js";

/** One fresh installation for a CLI test: the environment to run `gatehouse` with, its data directory. */
export interface CliInstallation {
  env: Record<string, string>;
  /** GATEHOUSE_DATA_DIR (the DuckDB activity store lives here on both record stores) */
  dir: string;
  /** Opens the record store the CLI wrote to (after the CLI exited); the caller closes it. */
  open(): Promise<RecordStore>;
  cleanup(): Promise<void>;
}

export interface CliStoreTarget {
  name: string;
  /** why the target is skipped (printed by describe.skipIf), null when it runs */
  skip: string | null;
  setup(): Promise<CliInstallation>;
}

/** The record stores a CLI command runs on: embedded SQLite, and PostgreSQL when one is configured. */
export function cliStoreTargets(prefix: string): CliStoreTarget[] {
  return [
    {
      name: "SQLite + DuckDB",
      skip: null,
      setup: async () => {
        const dir = mkdtempSync(join(tmpdir(), prefix));
        return {
          env: { GATEHOUSE_DATA_DIR: dir },
          dir,
          open: () => openSqliteStore(join(dir, "gatehouse.sqlite")),
          cleanup: async () => rmSync(dir, { recursive: true, force: true }),
        };
      },
    },
    {
      name: "PostgreSQL + DuckDB",
      skip: PG_URL ? null : PG_SKIP_REASON,
      setup: async () => {
        const db = await freshPostgresDatabase();
        const dir = mkdtempSync(join(tmpdir(), prefix));
        return {
          env: { DATABASE_URL: db.url, GATEHOUSE_DATA_DIR: dir },
          dir,
          open: () => openPostgresStore(db.url, 2),
          cleanup: async () => {
            await db.drop();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      },
    },
  ];
}
