import { join } from "node:path";
import { OutboxSignal } from "../broadcast/outbox/outbox-signal.js";
import { outboxSink } from "../broadcast/outbox/outbox-sink.js";
import { loadConfig, type Config } from "../config/config.js";
import type { AcceptedSink } from "../domain/ingest/pipeline/accepted-sink.js";
import { drainIngestBuffer, startIngestBuffer } from "../domain/ingest/pipeline/ingest-buffer.js";
import type { ActivityStore } from "../stores/activity-store.js";
import { isActivityLockError, openActivityStore } from "../stores/open-activity-store.js";
import { openRecordStore } from "../stores/open-record-store.js";
import type { RecordStore } from "../stores/record-store.js";
import type { CliIo } from "./cli-io.js";
import { UsageError } from "./usage-error.js";
import { parseUuid } from "./validate-args.js";
import { findOrganization, firstOrganization } from "../domain/organizations/organization-repo.js";

export interface Stores {
  config: Readonly<Config>;
  store: RecordStore;
  activity: ActivityStore;
  /**
   * Broadcast's outbox, for batches offered on (`import --broadcast`). No Broadcast worker runs in
   * a CLI process: the server's workers find the rows by polling, so nothing listens to its signal.
   */
  accepted: AcceptedSink;
}

/** Raised when --org names no organization, or there is none yet: the call was well formed, exit 1. */
export class OrganizationNotFound extends Error {
  override readonly name = "OrganizationNotFound";
}

/** The DuckDB file is held by another process (a running server): DuckDB allows one writer process. */
export class ActivityStoreLocked extends Error {
  override readonly name = "ActivityStoreLocked";
}

/**
 * Memory limit of the embedded DuckDB engine in CLI processes unless DUCKDB_MEMORY_LIMIT says
 * otherwise: DuckDB's buffer pool may otherwise grow to 80% of RAM during a long import (its
 * buffer cache grows with the file); this keeps the whole process well under 1 GiB (DuckDB spills
 * to disk past the limit instead of failing).
 */
const DUCKDB_CLI_MEMORY = "512MB";

/**
 * Opens the stores the server uses (record store: DATABASE_URL or the SQLite file; activity store:
 * CLICKHOUSE_URL or the DuckDB file, both in GATEHOUSE_DATA_DIR), runs fn and closes both.
 * `locked` is the advice printed when the DuckDB file is in use by another process.
 */
export async function withStores<T>(
  io: CliIo,
  locked: string,
  fn: (stores: Stores) => Promise<T>,
): Promise<T> {
  const config = loadConfig(io.env);
  const store = await openRecordStore(config);
  let activity: ActivityStore;
  try {
    // No background compaction in a CLI process: an import stays within its memory bound, and the
    // server compacts what the command wrote once it runs (a DuckDB file has one process at a time).
    activity = await openActivityStore({
      ...config,
      duckdb: { ...config.duckdb, memoryLimit: config.duckdb.memoryLimit ?? DUCKDB_CLI_MEMORY },
      activityCompaction: { ...config.activityCompaction, intervalMs: 0 },
    });
  } catch (err) {
    await store.close();
    if (isActivityLockError(err)) {
      const file = join(config.dataDir, "activity.duckdb");
      throw new ActivityStoreLocked(
        `the activity store ${file} is in use by another process (a running server?): a DuckDB file ` +
          `can be opened by one process only. ${locked}`,
        { cause: err },
      );
    }
    throw err;
  }
  try {
    // Batches a server accepted and did not write to the embedded store yet are written first, and
    // what this command accepts is written before it exits (src/domain/ingest/pipeline/ingest-buffer.ts).
    if (activity.exclusive) await startIngestBuffer(store, activity.exclusive);
    try {
      return await fn({ config, store, activity, accepted: outboxSink(new OutboxSignal()) });
    } finally {
      if (activity.exclusive) await drainIngestBuffer(store, activity.exclusive);
    }
  } finally {
    await activity.close();
    await store.close();
  }
}

/** --org when given (it must exist), else the first organization (the one the server bootstrapped). */
export async function resolveOrganization(
  store: RecordStore,
  rawOrg: string | undefined,
): Promise<{ id: string; name: string }> {
  if (rawOrg !== undefined) {
    const id = parseUuid("--org", rawOrg);
    const row = await findOrganization(store.db, id);
    if (!row) throw new OrganizationNotFound(`organization ${id} not found (see \`gatehouse org list\`)`);
    return { id: row.id, name: row.name };
  }
  const first = await firstOrganization(store.db);
  if (!first) {
    throw new OrganizationNotFound(
      "no organization yet: start the server once, or create one with `gatehouse org create NAME`",
    );
  }
  return { id: first.id, name: first.name };
}

/** Parses a positive integer option within bounds (commander hands over strings). */
export function parseIntOption(what: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`${what}: must be an integer from ${min} to ${max.toLocaleString("en-US")}`);
  }
  return Number(raw);
}
