import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  readKeyAndWorkspaceUsage,
  readKeyAndWorkspaceUsageCommitted,
} from "../../src/domain/usage/ledger.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";

/**
 * `readCommitted` (src/stores/record-store.ts): SQLite in a file reads on a second, read-only
 * connection that sees what is committed, synchronously, without waiting for the main
 * connection's transaction in flight; SQLite in memory has none (the gateway then awaits the read
 * on the main connection). The reservation's ledger read uses it.
 */
describe("readCommitted (SQLite in a file)", () => {
  let dir: string;
  let store: RecordStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-read-committed-"));
    store = await openSqliteStore(join(dir, "gatehouse.db"));
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const counter = (scopeId: string, usage: bigint) => ({
    scope: "key",
    scope_id: scopeId,
    window: "all",
    window_index: 0,
    organization_id: "00000000-0000-4000-8000-000000000001",
    usage_nano: usage,
    byok_nano: 0n,
  });

  it("sees committed rows only, at once, while a transaction is open on the main connection; the same totals as the awaited read after it commits", async () => {
    const now = new Date();
    const hash = "a".repeat(64);
    await store.db.insertInto("usage_counters").values(counter(hash, 5n)).execute();
    let commit: () => void = () => undefined;
    const gate = new Promise<void>((done) => (commit = done));
    let inside = false;
    const trx = store.transaction(async (t) => {
      await t.updateTable("usage_counters").set({ usage_nano: 7n }).where("scope_id", "=", hash).execute();
      inside = true;
      await gate;
    });
    while (!inside) await new Promise((d) => setTimeout(d, 5));
    // The update is not committed: the committed read still sees 5, and returns without waiting.
    expect(readKeyAndWorkspaceUsageCommitted(store, hash, null, now)?.key.all.usage).toBe(5n);
    commit();
    await trx;
    expect(readKeyAndWorkspaceUsageCommitted(store, hash, null, now)?.key.all.usage).toBe(7n);
    expect(readKeyAndWorkspaceUsageCommitted(store, hash, null, now)).toEqual(
      await readKeyAndWorkspaceUsage(store.db, hash, null, now),
    );
  });

  it("SQLite in memory has no committed-data connection: the read returns null (the caller awaits the main one)", async () => {
    const mem = await openSqliteStore(":memory:");
    expect(mem.readCommitted).toBeUndefined();
    expect(readKeyAndWorkspaceUsageCommitted(mem, "b".repeat(64), null, new Date())).toBeNull();
    await mem.close();
  });
});
