import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kysely, SqliteDialect, type CompiledQuery } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statusOfRow } from "../../src/broadcast/operations/delivery-status.js";
import {
  dueDestinations,
  pruneDeliveries,
  releaseBatches,
} from "../../src/broadcast/outbox/deliveries-repo.js";
import { enqueueBroadcast } from "../../src/broadcast/outbox/enqueue.js";
import { listOrdinaryKeys } from "../../src/domain/keys/key-repo.js";
import { activityDefaultWorkspaceId } from "../../src/domain/workspaces/workspace-repo.js";
import type { Db } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";

/**
 * Statements that run every second (the Broadcast worker's pass) or on a page users open often,
 * over tables that grow: each must find its rows through an index, not walk everything the table
 * has kept (a destination's backlog while it is down, a year of deleted keys). SQLite's plans are
 * checked here (EXPLAIN QUERY PLAN on the migrated schema); their cost on a large store is in
 * docs/performance.md "Statements that do not grow with history".
 */
describe("plans of the statements over growing tables (SQLite)", () => {
  let dir: string;
  let raw: BetterSqlite3.Database;
  let db: Db;
  const captured: CompiledQuery[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-plans-"));
    const file = join(dir, "gatehouse.db");
    await (await openSqliteStore(file)).close(); // the schema, by the real migrations
    raw = new BetterSqlite3(file);
    db = new Kysely({
      dialect: new SqliteDialect({ database: raw }),
      log: (e) => {
        if (e.level === "query") captured.push(e.query);
      },
    }) as unknown as Db;
  });
  afterAll(() => {
    raw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The plan lines of every statement `run` executes. */
  async function plansOf(run: () => Promise<unknown>): Promise<string[][]> {
    captured.length = 0;
    await run();
    return captured.map((q) =>
      (raw.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.parameters) as { detail: string }[]).map(
        (r) => r.detail,
      ),
    );
  }

  it("releasing outbox batches looks each batch's pending deliveries up by (batch_seq, state)", async () => {
    const [plan] = await plansOf(() => releaseBatches(db));
    expect(plan!.join("\n")).toMatch(/broadcast_deliveries_batch \(batch_seq=\? AND state=\?\)/);
  });

  it("pruning the deliveries of deleted destinations does not scan the deliveries", async () => {
    const plans = await plansOf(() => pruneDeliveries(db, Date.now(), 3_600_000, 7 * 86_400_000));
    const first = plans[0]!.join("\n");
    expect(first).toMatch(/SEARCH broadcast_deliveries USING .*INDEX \w+ \(destination_id=\?\)/);
    for (const plan of plans) expect(plan.join("\n")).not.toMatch(/^SCAN broadcast_deliveries/m);
  });

  it("the due destinations start from the destinations and search each one's due rows", async () => {
    const [plan] = await plansOf(() => dueDestinations(db, Date.now(), 200));
    const text = plan!.join("\n");
    expect(text).toMatch(
      /SEARCH d USING INDEX broadcast_deliveries_due \(destination_id=\? AND state=\? AND next_attempt_ms<\?\)/,
    );
    expect(text).not.toMatch(/^SCAN d\b/m);
  });

  it("a destination's latest dead letters come from an index, without sorting every dead row", async () => {
    const plans = await plansOf(() => statusOfRow(db, "dest-1", Date.now()));
    const dead = plans.map((p) => p.join("\n")).find((p) => p.includes("broadcast_deliveries_dest_finished"));
    expect(dead).toBeDefined();
    expect(dead).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
  });

  it("a page of a workspace's keys reads the live keys only, in order", async () => {
    const page = { organizationId: "org", workspaceId: "ws", includeDisabled: false, limit: 100, offset: 0 };
    const [plan] = await plansOf(() => listOrdinaryKeys(db, page));
    expect(plan!.join("\n")).toMatch(/api_keys_live_org_workspace_created/);
  });

  it("each recorded batch reads its organization's destinations by index, not every organization's", async () => {
    const [plan] = await plansOf(() =>
      enqueueBroadcast(db, "org", [], () => "[]", { nowMs: 0, contexts: null }),
    );
    expect(plan!.join("\n")).toMatch(
      /SEARCH destinations USING INDEX destinations_org \(organization_id=\?\)/,
    );
  });

  it("an organization's default workspace is found by index", async () => {
    const [plan] = await plansOf(() => activityDefaultWorkspaceId(db, "org"));
    expect(plan!.join("\n")).toMatch(/SEARCH workspaces USING INDEX workspaces_org_default/);
  });
});
