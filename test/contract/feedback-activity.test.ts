import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FeedbackRow } from "../../src/activity/feedback-row.js";
import { FeedbackActivity, storeFeedback } from "../../src/domain/generation-feedback/feedback-activity.js";
import type { GenerationFeedback } from "../../src/domain/generation-feedback/generation-feedback-repo.js";
import { readActivityVersion } from "../../src/domain/ingest/repos/activity-version.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { POSTGRES_CAPS, SQLITE_CAPS, type DialectCaps } from "../../src/stores/dialect.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { migrations } from "../../src/stores/migrations/index.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { PG_SKIP_REASON, PG_URL, STORE_FACTORIES, freshPostgresDatabase } from "../helpers/stores.js";

/**
 * Feedback's way from the record store to the activity store (src/domain/generation-feedback/
 * feedback-activity.ts) on both record-store engines, with a real DuckDB: stored and queued
 * together, written once whatever fails or crashes in between, the queue emptied, the activity
 * version moved; row locks keep two PostgreSQL instances from writing a row twice; migration 015
 * queues the feedback stored before it.
 */
const GEN_AT = Date.parse("2026-11-17T10:00:00.000Z");
let seq = 0;

function submission(organizationId: string, over: Partial<GenerationFeedback> = {}): GenerationFeedback {
  seq += 1;
  return {
    id: `fb-${seq}`,
    organizationId,
    generationId: `gen-${seq}`,
    category: "latency",
    comment: null,
    keyHash: "h".repeat(64),
    createdAt: "2026-11-18T08:00:00.000Z",
    ...over,
  };
}

/** Feedback rows of an organization in the activity store: id → times written. */
async function inActivity(activity: ActivityStore, org: string): Promise<Record<string, number>> {
  const rows = await activity.query(
    {
      sql: "SELECT feedback_id, count(*) AS n FROM generation_feedback WHERE organization_id = $org GROUP BY feedback_id",
      params: { org },
    },
    { timeoutMs: 10_000 },
  );
  return Object.fromEntries(rows.map((r) => [r.feedback_id as string, Number(r.n)]));
}

const queued = async (store: RecordStore): Promise<string[]> =>
  (
    await store.db
      .selectFrom("feedback_activity_queue")
      .select("feedback_id")
      .orderBy("feedback_id")
      .execute()
  ).map((r) => r.feedback_id);

/** The activity store with insertFeedback replaced (a failing or counting one). */
const withInsertFeedback = (
  activity: ActivityStore,
  insertFeedback: (rows: readonly FeedbackRow[]) => Promise<void>,
): ActivityStore => ({ ...activity, insertFeedback });

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`feedback into the activity store on ${f.name}`, () => {
    let store: Awaited<ReturnType<typeof f.open>>;
    let activity: ActivityStore;
    beforeAll(async () => {
      store = await f.open();
      activity = await openDuckDbActivityStore({ path: ":memory:" });
    });
    afterAll(async () => {
      await activity?.close();
      await store?.dispose();
    });

    it("stored and queued in one transaction; writeNow() moves it over, empties the queue, moves the activity version", async () => {
      const org = "org-written";
      const fb = submission(org, { category: "api_error" });
      await storeFeedback(store, fb, GEN_AT);
      expect(await queued(store)).toContain(fb.id);
      const queue = await store.db
        .selectFrom("feedback_activity_queue")
        .selectAll()
        .where("feedback_id", "=", fb.id)
        .executeTakeFirstOrThrow();
      expect(queue).toEqual({
        feedback_id: fb.id,
        organization_id: org,
        generation_id: fb.generationId,
        generation_created_at: "2026-11-17T10:00:00.000Z",
        category: "api_error",
        created_at: "2026-11-18T08:00:00.000Z",
      });
      const before = await readActivityVersion(store.db, org);

      await new FeedbackActivity(store, activity).writeNow(fb.id);
      expect(await inActivity(activity, org)).toEqual({ [fb.id]: 1 });
      expect(await queued(store)).not.toContain(fb.id);
      expect(await readActivityVersion(store.db, org)).toBe(before + 1n);
      const [row] = await activity.query(
        {
          sql: "SELECT generation_id, category, created_at, submitted_at FROM generation_feedback WHERE feedback_id = $id",
          params: { id: fb.id },
        },
        { timeoutMs: 10_000 },
      );
      expect(row).toEqual({
        generation_id: fb.generationId,
        category: "api_error",
        created_at: "2026-11-17T10:00:00.000Z",
        submitted_at: "2026-11-18T08:00:00.000Z",
      });
    });

    it("a submission that fails to store queues nothing (same transaction)", async () => {
      const fb = submission("org-rollback");
      await storeFeedback(store, fb, GEN_AT);
      const again = { ...fb, generationId: "another" }; // the same id: the insert fails
      await expect(storeFeedback(store, again, GEN_AT)).rejects.toThrow();
      const rows = await store.db
        .selectFrom("feedback_activity_queue")
        .select("generation_id")
        .where("feedback_id", "=", fb.id)
        .execute();
      expect(rows).toEqual([{ generation_id: fb.generationId }]);
      await new FeedbackActivity(store, activity).drain();
    });

    it("a crash after the activity write and before the queue delete: the next pass writes nothing twice", async () => {
      const org = "org-crash";
      const a = submission(org);
      const b = submission(org, { category: "other" });
      await storeFeedback(store, a, GEN_AT);
      await storeFeedback(store, b, GEN_AT);
      // The dead pass had written both rows, then died before its record-store transaction.
      await activity.insertFeedback(
        [a, b].map((s) => ({
          organization_id: org,
          feedback_id: s.id,
          generation_id: s.generationId,
          created_at_ms: GEN_AT,
          category: s.category,
          submitted_at_ms: Date.parse(s.createdAt),
        })),
      );
      expect(await queued(store)).toEqual(expect.arrayContaining([a.id, b.id]));
      expect(await new FeedbackActivity(store, activity).drain()).toBe(2);
      expect(await inActivity(activity, org)).toEqual({ [a.id]: 1, [b.id]: 1 });
      expect(await queued(store)).toEqual([]);
    });

    it("the activity store down: writeNow() reports it and resolves, the row stays queued, a later pass writes it", async () => {
      const org = "org-down";
      const fb = submission(org);
      await storeFeedback(store, fb, GEN_AT);
      const down = new FeedbackActivity(
        store,
        withInsertFeedback(activity, () => Promise.reject(new Error("activity store unreachable"))),
      );
      const failures: unknown[] = [];
      down.onFailure((err) => failures.push(err));
      await expect(down.writeNow(fb.id)).resolves.toBeUndefined();
      expect(failures).toHaveLength(1);
      expect(await queued(store)).toEqual([fb.id]);
      await expect(down.drain()).rejects.toThrow("activity store unreachable");
      expect(await inActivity(activity, org)).toEqual({});

      expect(await new FeedbackActivity(store, activity).drain()).toBe(1);
      expect(await inActivity(activity, org)).toEqual({ [fb.id]: 1 });
      expect(await queued(store)).toEqual([]);
    });

    it("drain() writes a backlog page by page; start() drains at once and then periodically until stop()", async () => {
      const org = "org-backlog";
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const fb = submission(org, { category: i % 2 === 0 ? "billing" : "formatting" });
        ids.push(fb.id);
        await storeFeedback(store, fb, GEN_AT + i);
      }
      let calls = 0;
      const counting = withInsertFeedback(activity, (rows) => {
        calls += 1;
        return activity.insertFeedback(rows);
      });
      expect(await new FeedbackActivity(store, counting, { pageRows: 5 }).drain()).toBe(12);
      expect(calls).toBe(3);
      expect(Object.keys(await inActivity(activity, org)).sort()).toEqual([...ids].sort());

      const later = submission(org);
      const periodic = new FeedbackActivity(store, activity, { intervalMs: 50 });
      await periodic.start(); // nothing queued: the first pass finds nothing
      await storeFeedback(store, later, GEN_AT);
      const deadline = Date.now() + 5_000;
      while ((await queued(store)).length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      await periodic.stop();
      expect((await inActivity(activity, org))[later.id]).toBe(1);
      expect(await queued(store)).toEqual([]);
    });
  });
}

describe.skipIf(!PG_URL)("two instances on one PostgreSQL draining at once", () => {
  if (!PG_URL) console.warn(PG_SKIP_REASON);
  let dbi: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let one: RecordStore;
  let two: RecordStore;
  let activity: ActivityStore;
  beforeAll(async () => {
    dbi = await freshPostgresDatabase();
    one = await openPostgresStore(dbi.url, 4);
    two = await openPostgresStore(dbi.url, 4);
    activity = await openDuckDbActivityStore({ path: ":memory:" });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await activity?.close();
    await dbi?.drop();
  });

  it("row locks hand every queued row to the activity store once (no instance writes another's rows)", async () => {
    // Two organizations interleaved: every page settles both (their versions in one order).
    const orgs = ["org-two-instances-z", "org-two-instances-a"];
    for (let i = 0; i < 60; i++) await storeFeedback(one, submission(orgs[i % 2]!), GEN_AT + i);
    // Each instance's own handle on a shared activity store (a ClickHouse server): slow writes, so
    // the passes overlap, and no existence check between them to hide a double hand-over.
    const handed = new Map<string, number>();
    const slow = withInsertFeedback(activity, async (rows) => {
      await new Promise((r) => setTimeout(r, 30));
      for (const r of rows) handed.set(r.feedback_id, (handed.get(r.feedback_id) ?? 0) + 1);
      await activity.insertFeedback(rows);
    });
    const a = new FeedbackActivity(one, slow, { pageRows: 7 });
    const b = new FeedbackActivity(two, slow, { pageRows: 7 });
    const own = submission(orgs[0]!);
    await storeFeedback(two, own, GEN_AT);
    const [na, nb] = await Promise.all([a.drain(), b.drain(), b.writeNow(own.id)]);
    expect(na).toBeGreaterThan(0);
    expect(nb).toBeGreaterThan(0);
    // A pass skips the rows the other holds: whatever both left is written by the next passes.
    await a.drain();
    await b.drain();
    expect(handed.size).toBe(61);
    expect([...handed.values()].every((n) => n === 1)).toBe(true);
    expect(Object.keys(await inActivity(activity, orgs[0]!))).toHaveLength(31);
    expect(Object.keys(await inActivity(activity, orgs[1]!))).toHaveLength(30);
    expect(await queued(one)).toEqual([]);
  });
});

/** A record store migrated to 014 (before the queue existed), by a Migrator of its own. */
async function migrateTo014(db: Kysely<unknown>, caps: DialectCaps): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations(caps) } });
  const { error } = await migrator.migrateTo("014-guardrails-members");
  if (error) throw error as Error;
}

async function seedBefore015(db: Kysely<unknown>): Promise<void> {
  await sql`INSERT INTO gateway_generations (organization_id, id, key_hash, workspace_id, created_at, detail)
            VALUES ('org-old', 'gen-old', 'h', 'ws', '2026-10-01T12:00:00.000Z', '{}')`.execute(db);
  for (const [id, category] of [
    ["fb-old-1", "latency"],
    ["fb-old-2", "billing"],
  ]) {
    await sql`INSERT INTO generation_feedback (id, organization_id, generation_id, category, comment, key_hash, created_at)
              VALUES (${id}, 'org-old', 'gen-old', ${category}, NULL, 'h', '2026-10-02T00:00:00.000Z')`.execute(
      db,
    );
  }
}

async function expectOldFeedbackWritten(store: RecordStore): Promise<void> {
  expect(await queued(store)).toEqual(["fb-old-1", "fb-old-2"]);
  const activity = await openDuckDbActivityStore({ path: ":memory:" });
  try {
    expect(await new FeedbackActivity(store, activity).drain()).toBe(2);
    const rows = await activity.query(
      {
        sql: "SELECT feedback_id, category, created_at FROM generation_feedback ORDER BY feedback_id",
        params: {},
      },
      { timeoutMs: 10_000 },
    );
    expect(rows).toEqual([
      { feedback_id: "fb-old-1", category: "latency", created_at: "2026-10-01T12:00:00.000Z" },
      { feedback_id: "fb-old-2", category: "billing", created_at: "2026-10-01T12:00:00.000Z" },
    ]);
  } finally {
    await activity.close();
  }
}

describe("migration 015 queues the feedback stored before it", () => {
  it("on sqlite: the first start after it writes that feedback at its generations' time", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-m015-"));
    try {
      const file = join(dir, "gatehouse.db");
      const raw = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new BetterSqlite3(file) }) });
      await migrateTo014(raw, SQLITE_CAPS);
      await seedBefore015(raw);
      await raw.destroy();
      const store = await openSqliteStore(file);
      try {
        await expectOldFeedbackWritten(store);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!PG_URL)("on postgres: the same", async () => {
    const dbi = await freshPostgresDatabase();
    try {
      const raw = new Kysely<unknown>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: dbi.url, max: 2 }) }),
      });
      await migrateTo014(raw, POSTGRES_CAPS);
      await seedBefore015(raw);
      await raw.destroy();
      const store = await openPostgresStore(dbi.url, 2);
      try {
        await expectOldFeedbackWritten(store);
      } finally {
        await store.close();
      }
    } finally {
      await dbi.drop();
    }
  });
});
