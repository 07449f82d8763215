import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PolicyCache } from "../../src/domain/policy/policy-cache.js";
import { recordStoreLoader } from "../../src/domain/policy/policy-loader.js";
import { POLICY_PROPAGATION_BOUND_MS } from "../../src/domain/policy/policy.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { sqliteChangeChannel } from "../../src/stores/sqlite/sqlite-change-channel.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { within } from "../helpers/within.js";
import { G, newKey, ok } from "../http/guardrails-helpers.js";

/**
 * On SQLite the CLI writes to the file the server uses, and SQLite sends no notifications: the
 * server's policy cache (as main.ts builds it, over the file's data_version) drops what it holds
 * within POLICY_PROPAGATION_BOUND_MS of a commit by another connection, and keeps it while only
 * its own connection writes. The "CLI" here is a second connection to the same file, writing
 * through the management API's own code.
 */
describe("SQLite: writes by another process reach the server's policy cache", () => {
  let dir: string;
  let server: RecordStore;
  let cli: RecordStore;
  let t: TestApp;
  let cache: PolicyCache;
  let loads = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gh-sqlite-foreign-"));
    const file = join(dir, "gatehouse.db");
    server = await openSqliteStore(file);
    cli = await openSqliteStore(file);
    t = await makeTestApp({ store: cli });
    const loader = recordStoreLoader(server.db);
    cache = new PolicyCache(
      {
        ...loader,
        key: (hash) => {
          loads++;
          return loader.key(hash);
        },
      },
      { channel: sqliteChangeChannel(server.dataVersion!) },
    );
    expect(cache.caching).toBe(true);
  });

  afterAll(async () => {
    await cache?.close();
    await t?.close();
    await server?.close();
    await cli?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a key disabled and a guardrail created by the other connection are seen within the bound", async () => {
    const hash = await newKey(t, "foreign");
    const before = await cache.keyByHash(hash);
    expect(before?.disabled).toBe(false);
    await ok(t, "PATCH", `/api/v1/keys/${hash}`, { disabled: true });
    expect(await within(5_000, async () => (await cache.keyByHash(hash))?.disabled === true)).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );

    const cached = await cache.guardrails(t.organizationId);
    const g = (await ok(t, "POST", G, { name: "from the CLI" })).data.id as string;
    expect(
      await within(5_000, async () => (await cache.guardrails(t.organizationId)).byId.has(g)),
    ).toBeLessThan(POLICY_PROPAGATION_BOUND_MS);
    expect(await cache.guardrails(t.organizationId)).not.toBe(cached);
  });

  it("while only the server's own connection writes, what is cached stays cached", async () => {
    const hash = await newKey(t, "quiet");
    await new Promise((r) => setTimeout(r, POLICY_PROPAGATION_BOUND_MS));
    await cache.keyByHash(hash);
    const after = loads;
    // The server's own commit does not move data_version.
    await server.db
      .updateTable("organizations")
      .set({ name: "renamed by the server" })
      .where("id", "=", t.organizationId)
      .execute();
    await new Promise((r) => setTimeout(r, POLICY_PROPAGATION_BOUND_MS));
    await cache.keyByHash(hash);
    expect(loads).toBe(after);
  });
});
