import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import {
  CHECKPOINT_INTERVAL_MS,
  FALLBACK_AUTOCHECKPOINT_PAGES,
} from "../../src/stores/sqlite/checkpointer.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import type { RecordStore } from "../../src/stores/record-store.js";

/*
 * WAL checkpoints of the SQLite record store run on a thread of their own (checkpointer.ts), not
 * inside the commits of the event loop's connection: observed through the files, a real SQLite
 * file and a real worker thread.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function newFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "gh-checkpoints-"));
  dirs.push(dir);
  return join(dir, "gatehouse.sqlite");
}
const size = (f: string): number => (existsSync(f) ? statSync(f).size : 0);
const PAGE = 4096;

/** `pages` pages of new rows, one transaction of about 10 pages at a time. */
async function write(store: RecordStore, pages: number): Promise<void> {
  await sql`create table if not exists filler (n integer primary key, b blob not null)`.execute(store.db);
  for (let i = 0; i < pages / 10; i++) {
    await store.transaction(async (trx) => {
      for (let j = 0; j < 10; j++)
        await sql`insert into filler (b) values (randomblob(${PAGE - 200}))`.execute(trx);
    });
  }
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe("SQLite WAL checkpoints", () => {
  it("are the worker's: frames reach the database file without a checkpoint in any commit", async () => {
    const file = newFile();
    const store = await openSqliteStore(file);
    try {
      const { rows } = await sql<{ wal_autocheckpoint: number | bigint }>`pragma wal_autocheckpoint`.execute(
        store.db,
      );
      expect(Number(rows[0]?.wal_autocheckpoint)).toBe(FALLBACK_AUTOCHECKPOINT_PAGES);
      const before = size(file);
      // 300 pages: under SQLite's default threshold (1,000), so no commit would have copied them.
      await write(store, 300);
      expect(size(`${file}-wal`)).toBeGreaterThan(250 * PAGE);
      expect(await until(() => size(file) - before > 250 * PAGE, 3 * CHECKPOINT_INTERVAL_MS + 1_000)).toBe(
        true,
      );
    } finally {
      await store.close();
    }
    // The worker's connection closed first: the store's close was the last, so SQLite removed the WAL.
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it("the WAL stays bounded while writes never pause (the fallback threshold), and every row is kept", async () => {
    const file = newFile();
    const store = await openSqliteStore(file);
    try {
      const pages = 3 * FALLBACK_AUTOCHECKPOINT_PAGES;
      await write(store, pages);
      expect(size(`${file}-wal`)).toBeLessThan(1.5 * FALLBACK_AUTOCHECKPOINT_PAGES * PAGE);
      const { rows } = await sql<{ n: number | bigint }>`select count(*) as n from filler`.execute(store.db);
      expect(Number(rows[0]?.n)).toBe(pages);
    } finally {
      await store.close();
    }
    const again = await openSqliteStore(file);
    try {
      const { rows } = await sql<{ n: number | bigint }>`select count(*) as n from filler`.execute(again.db);
      expect(Number(rows[0]?.n)).toBe(3 * FALLBACK_AUTOCHECKPOINT_PAGES);
    } finally {
      await again.close();
    }
  });
});
