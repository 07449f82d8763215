import { loadConfig } from "../config/config.js";
import { openRecordStore } from "../stores/open-record-store.js";
import type { RecordStore } from "../stores/record-store.js";
import type { CliIo } from "./cli-io.js";

/**
 * Opens the record store the server uses (DATABASE_URL, else the SQLite file in
 * GATEHOUSE_DATA_DIR), migrating it like a server start would, runs fn, and always closes it.
 * Configuration errors surface as ConfigError before anything is opened.
 */
export async function withStore<T>(io: CliIo, fn: (store: RecordStore) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  const store = await openRecordStore(config);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
