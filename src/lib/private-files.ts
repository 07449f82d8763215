import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Everything this process creates from now on is its owner's alone: files 0600, directories 0700.
 * The data directory holds prompts waiting for delivery, stored error texts and the data key, and
 * the stores' native libraries (SQLite, DuckDB) create their files (WAL, SHM, journals, segment
 * logs) with the process's umask; this is the one place that covers them all.
 */
export function keepNewFilesPrivate(): void {
  process.umask(0o077);
}

/** Entries of a data directory that Gatehouse writes: its stores, their journals and the data key. */
const OWN_ENTRY = /^(gatehouse\.sqlite|activity\.duckdb|encryption\.key)/;

/**
 * Creates the data directory 0700 when it does not exist, and takes group and other access away
 * from Gatehouse's own entries in it, which an older version created 0644 (directories 0755).
 * Other files an operator keeps there, and the directory itself when it existed (its mode is the
 * operator's choice), are left alone. Returns what could not be changed (not the owner, say),
 * for the caller to report.
 */
export function restrictDataDir(dataDir: string): string[] {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const failed: string[] = [];
  const tighten = (path: string): void => {
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) return;
      if ((st.mode & 0o077) !== 0) chmodSync(path, st.mode & 0o700);
      if (st.isDirectory()) for (const name of readdirSync(path)) tighten(join(path, name));
    } catch {
      failed.push(path);
    }
  };
  for (const name of readdirSync(dataDir)) if (OWN_ENTRY.test(name)) tighten(join(dataDir, name));
  return failed;
}
