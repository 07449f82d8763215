import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  broadcastBacklog,
  broadcastOutbox,
  statusOfRow,
} from "../../src/broadcast/operations/delivery-status.js";
import { claimDeliveries } from "../../src/broadcast/outbox/claims-repo.js";
import { dueDestinations } from "../../src/broadcast/outbox/due-destinations.js";
import { releaseBatches } from "../../src/broadcast/outbox/batches-repo.js";
import { pruneDeliveries } from "../../src/broadcast/outbox/queue-upkeep.js";
import { insertDestination } from "../../src/domain/destinations/destination-repo.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { systemClock } from "../../src/lib/clock.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import type { Database } from "../../src/stores/schema.js";
import { destinationRow } from "../helpers/destination-configs.js";
import { freshPostgresDatabase, PG_URL } from "../helpers/stores.js";
import { enqueueBroadcast } from "../../src/broadcast/outbox/enqueue.js";
import {
  creatorUsageRows,
  lifetimeLimitsOfOrganization,
  listOrdinaryKeys,
} from "../../src/domain/keys/key-repo.js";
import { readOrganizationUsage } from "../../src/domain/usage/ledger.js";
import { activityDefaultWorkspaceId } from "../../src/domain/workspaces/workspace-repo.js";
import type { Db, RecordStore } from "../../src/stores/record-store.js";
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

  it("Broadcast's backlog (GET /metrics) starts from the destinations and searches each one's pending rows", async () => {
    const [plan] = await plansOf(() => broadcastBacklog(db, Date.now()));
    const text = plan!.join("\n");
    expect(text).toMatch(/^SCAN x\b/m);
    expect(text).toMatch(/SEARCH d USING (COVERING )?INDEX \w+ \(destination_id=\? AND state=\?\)/);
    expect(text).not.toMatch(/^SCAN d\b/m);
  });

  it("Broadcast's outbox (GET /metrics) counts and dates the batches still to fan out from the (fanned_out, seq) index", async () => {
    const plans = await plansOf(() => broadcastOutbox(db, Date.now()));
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      const text = plan.join("\n");
      expect(text).toMatch(
        /SEARCH broadcast_batches USING (COVERING )?INDEX broadcast_batches_fanout \(fanned_out=\?\)/,
      );
      expect(text).not.toMatch(/TEMP B-TREE/);
    }
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

  it("GET /credits reads the organization's all-time counters and live keys by index", async () => {
    const [usage] = await plansOf(() => readOrganizationUsage(db, "org", ["w1", "w2"]));
    expect(usage!.join("\n")).toMatch(
      /SEARCH usage_counters USING (PRIMARY KEY|INDEX sqlite_autoindex_usage_counters)/,
    );
    const [limits] = await plansOf(() => lifetimeLimitsOfOrganization(db, "org"));
    expect(limits!.join("\n")).toMatch(/SEARCH api_keys USING INDEX api_keys_live_org_workspace_created/);
  });

  it("a member guardrail's budget finds the member's keys by index, and each key's current counters by primary key", async () => {
    const [plan] = await plansOf(() =>
      creatorUsageRows(db, "org", "user_1", { day: 1, week: 1, month: 1, all: 0 }),
    );
    const text = plan!.join("\n");
    expect(text).toMatch(
      /SEARCH api_keys USING (COVERING )?INDEX api_keys_creator \(creator_user_id=\? AND organization_id=\?\)/,
    );
    expect(text).toMatch(
      /SEARCH usage_counters USING (PRIMARY KEY|INDEX sqlite_autoindex_usage_counters_1) \(scope=\? AND scope_id=\? AND window=\? AND window_index=\?\)/,
    );
    expect(text).not.toMatch(/SCAN (usage_counters|api_keys)/);
  });

  it("an organization's default workspace is found by index", async () => {
    const [plan] = await plansOf(() => activityDefaultWorkspaceId(db, "org"));
    expect(plan!.join("\n")).toMatch(/SEARCH workspaces USING INDEX workspaces_org_default/);
  });
});

/**
 * Broadcast's statements on PostgreSQL beside a down destination's backlog. PostgreSQL chooses
 * plans from table statistics, so the plans are read on a table of realistic size, ANALYZEd: a
 * live destination with 36,000 delivered rows and 50 due ones (the newest), and a down
 * destination's 20,000 pending rows backing off. Taking "this destination" and "pending" as
 * independent, the planner walked the primary key in id order through all of them to find the
 * live one's 64 oldest due rows; the pair's statistics (migration 010) make it read that
 * destination's due rows through an index on destination_id instead.
 */
describe.skipIf(!PG_URL)("Broadcast's plans on PostgreSQL", () => {
  let dbi: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let store: RecordStore;
  let client: pg.Client;
  let now: number;
  beforeAll(async () => {
    dbi = await freshPostgresDatabase();
    store = await openPostgresStore(dbi.url, 2);
    client = new pg.Client({ connectionString: dbi.url });
    await client.connect();
    const { organizationId, workspaceId } = await createOrganization(store, systemClock, "plans");
    const at = new Date().toISOString();
    for (const id of ["down", "live"]) {
      await insertDestination(
        store.db,
        destinationRow({ id, organizationId, workspaceId, type: "webhook", at }),
      );
    }
    now = Date.now();
    const fill = (
      destination: string,
      count: number,
      state: string,
      nextAttemptMs: number,
      finished: boolean,
    ) =>
      client.query(
        `INSERT INTO broadcast_deliveries (destination_id, organization_id, batch_seq, ids, item_count,
           min_created_ms, max_created_ms, state, attempts, created_at_ms, next_attempt_ms, finished_at_ms)
         SELECT $1, $2, g, '[]', 10, $3::bigint + g, $3::bigint + g, $4, 0, $3::bigint + g, $5::bigint,
                CASE WHEN $6 THEN $3::bigint + g END
         FROM generate_series(1, $7::int) AS g`,
        [destination, organizationId, now - 3_600_000, state, nextAttemptMs, finished, count],
      );
    await fill("live", 36_000, "delivered", now - 1_000, true);
    await fill("down", 20_000, "pending", now + 3_600_000, false);
    await fill("live", 50, "pending", now - 1_000, false);
    await client.query("ANALYZE broadcast_deliveries");
  }, 60_000);
  afterAll(async () => {
    await client?.end();
    await store?.close();
    await dbi?.drop();
  });

  /** Runs `run` on a logging connection; the plan (EXPLAIN) of its first statement matching `pick`. */
  async function planOf(run: (db: Db) => Promise<unknown>, pick: RegExp): Promise<string> {
    const captured: CompiledQuery[] = [];
    const logged = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: dbi.url, max: 1 }) }),
      log: (e) => {
        if (e.level === "query") captured.push(e.query);
      },
    });
    try {
      await run(logged);
    } finally {
      await logged.destroy();
    }
    const q = captured.find((c) => pick.test(c.sql));
    expect(q).toBeDefined();
    const plan = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${q!.sql}`, [...q!.parameters]);
    return plan.rows.map((r) => r["QUERY PLAN"]).join("\n");
  }

  it("the claim reads the claimed destination's due rows through an index on destination_id, not the primary key through every row", async () => {
    const text = await planOf(async (db) => {
      const claim = await claimDeliveries({ ...store, db }, "live", "plan-test", now, 30_000, 100);
      expect(claim.rows.length).toBeGreaterThan(0); // the statement works on this data
    }, /^update "broadcast_deliveries"/i);
    // The due rows (the statement's only scan with a state condition) come from an index
    // condition naming the destination; the primary key is only used to update the chosen ids.
    expect(text).toMatch(/(Index|Recheck) Cond: \(\(?destination_id = 'live'::text\)/);
    expect(text).not.toMatch(/Filter: \([^\n]*destination_id = 'live'::text/);
    expect(text).not.toMatch(/Seq Scan on broadcast_deliveries/);
  }, 60_000);

  it("Broadcast's backlog (GET /metrics) reads each live destination's pending rows by index, not the delivered ones", async () => {
    const text = await planOf(async (db) => {
      const backlog = await broadcastBacklog(db, now, store.caps.lateralJoins);
      // Leased rows (a claim's) count as pending too.
      expect(backlog).toEqual([
        { destinationType: "webhook", pending: 200_500, oldestPendingAgeMs: 3_600_000 - 1 },
      ]);
    }, /broadcast_deliveries/);
    expect(text).toMatch(/Nested Loop/);
    expect(text).toMatch(/(Index|Recheck) Cond: \(\(?destination_id = x\.id\)/);
    expect(text).not.toMatch(/Seq Scan on broadcast_deliveries/);
  }, 60_000);
});
