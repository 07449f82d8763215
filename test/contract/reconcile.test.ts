import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActivityRow } from "../../src/activity/activity-row.js";
import { drainIngestBuffer } from "../../src/domain/ingest/pipeline/ingest-buffer.js";
import { ingestGenerations } from "../../src/domain/ingest/ingest-generations.js";
import { createKey } from "../../src/domain/keys/key-service.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { activityTotalsQuery } from "../../src/analytics/reconcile/activity-totals.js";
import { reconcileLedger, windowLabel } from "../../src/analytics/reconcile/reconcile.js";
import {
  activityDefaultWorkspaceId,
  insertWorkspace,
  softDeleteWorkspace,
} from "../../src/domain/workspaces/workspace-repo.js";
import { dayIndex, monthIndex, weekIndex } from "../../src/domain/usage/windows.js";
import { ManualClock } from "../../src/lib/clock.js";
import { usdToNano } from "../../src/lib/money.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openChdbActivityStore } from "../../src/stores/clickhouse/chdb-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { STORE_FACTORIES } from "../helpers/stores.js";
import { GENERATION_COLUMNS, TAG_COLUMNS } from "../../src/stores/activity-columns.js";
import { VALUE_SEPARATOR, type EncodedActivity, type EncodedTable } from "../../src/stores/column-texts.js";
import { wireGeneration } from "../helpers/wire-generations.js";

/**
 * reconcileLedger on the two supported pairs: SQLite + DuckDB (the embedded install) and
 * PostgreSQL + the ClickHouse engine (chDB in-process, the scaled-out install's dialect). After
 * ingest through ingestGenerations there is no drift in any window; a tampered counter row, an
 * activity row deleted or never written, are found, with the right window and amounts.
 */
const PAIRS = [
  {
    name: "SQLite + DuckDB",
    record: STORE_FACTORIES.find((f) => f.name === "sqlite")!,
    activity: () => openDuckDbActivityStore({ path: ":memory:" }),
  },
  {
    name: "PostgreSQL + ClickHouse (chDB)",
    record: STORE_FACTORIES.find((f) => f.name === "postgres")!,
    activity: () => openChdbActivityStore(),
  },
];

const NOW = new Date("2026-11-18T12:00:00.000Z");
const DAY = 86_400_000;

/** Encoded rows (column texts, see column-texts.ts) without the generations and tags of some ids. */
function withoutIds(encoded: EncodedActivity, drop: ReadonlySet<string>): EncodedActivity {
  const table = <Row>(
    t: EncodedTable<Row>,
    idColumn: number,
    idOf: (r: Row) => string,
  ): EncodedTable<Row> => {
    if (t.rows) {
      const rows = t.rows.filter((r) => !drop.has(idOf(r)));
      return { count: rows.length, rows };
    }
    if (t.count === 0) return t;
    const columns = t.texts.map((text) => text.split(VALUE_SEPARATOR));
    const keep = (columns[idColumn] as string[]).map((id) => !drop.has(id));
    const texts = columns.map((values) => values.filter((_v, i) => keep[i]).join(VALUE_SEPARATOR));
    const count = keep.filter(Boolean).length;
    return count === 0 ? { count: 0, texts: [] } : { count, texts };
  };
  return {
    generations: table(
      encoded.generations,
      GENERATION_COLUMNS.findIndex((c) => c.name === "id"),
      (r) => r.id,
    ),
    tags: table(
      encoded.tags,
      TAG_COLUMNS.findIndex((c) => c.name === "generation_id"),
      (t) => t.generation_id,
    ),
  };
}

/**
 * An activity store whose writes can drop chosen ids (an activity row lost after the ledger
 * counted it): inserts, and the buffered writes of the embedded store's ingest path.
 */
function lossy(inner: ActivityStore, drop: Set<string>): ActivityStore {
  const ex = inner.exclusive;
  return {
    ...inner,
    dialect: inner.dialect,
    insert: (rows, tags) =>
      inner.insert(
        rows.filter((r: ActivityRow) => !drop.has(r.id)),
        tags.filter((t) => !drop.has(t.generation_id)),
      ),
    exclusive: ex && {
      owner: ex.owner,
      session: ex.session,
      logDir: ex.logDir,
      apply: (batches, seqs) =>
        ex.apply(
          batches.map((b) => withoutIds(b, drop)),
          seqs,
        ),
      applied: () => ex.applied(),
      forget: (seqs) => ex.forget(seqs),
      beforeRead: (barrier) => ex.beforeRead(barrier),
    },
  };
}

for (const pair of PAIRS) {
  describe.skipIf(pair.record.skip)(`reconcile on ${pair.name}`, () => {
    let store: Awaited<ReturnType<typeof pair.record.open>>;
    let activity: ActivityStore;
    const clock = new ManualClock(NOW);
    let orgId: string;
    let defaultWs: string;
    let otherWs: string;
    let keyA: string;
    let keyB: string;
    const drop = new Set<string>();
    const sent: { id: string; key: string; ws: string; at: number; usage: bigint; byok: bigint }[] = [];

    beforeAll(async () => {
      store = await pair.record.open();
      // Lossy from the start (nothing dropped until a test says so): the embedded store's ingest
      // buffer writes through the first writer it is given.
      activity = lossy(await pair.activity(), drop);
      const org = await createOrganization(store, clock, "Reconcile");
      orgId = org.organizationId;
      defaultWs = org.workspaceId;
      otherWs = await insertWorkspace(store.db, {
        organizationId: orgId,
        name: "Other",
        slug: "other",
        isDefault: false,
        createdBy: null,
        now: NOW,
      });
      keyA = (await createKey(store, clock, orgId, { name: "A" })).data.hash;
      keyB = (await createKey(store, clock, orgId, { name: "B", workspace_id: otherWs })).data.hash;
      // A second organization with activity of its own: never part of the first one's totals.
      const other = await createOrganization(store, clock, "Elsewhere");
      const { hashKey } = await import("../../src/lib/ids.js");
      await ingestGenerations({ store, activity, clock }, other.organizationId, [
        record("elsewhere-1", hashKey(other.managementKey), NOW.getTime() - DAY, 5, 0),
      ]);
    });
    afterAll(async () => {
      await activity?.close();
      await store?.dispose();
    });

    function record(id: string, key: string, at: number, usage: number, byok: number, ws?: string | null) {
      return wireGeneration({
        id,
        created_at: new Date(at).toISOString(),
        api_key_hash: key,
        ...(ws === undefined ? {} : { workspace_id: ws }),
        usage,
        is_byok: byok > 0,
        byok_usage_inference: byok,
      });
    }

    it("finds no drift after random ingests over several weeks and months, legacy records included", async () => {
      const arb = fc.array(
        fc.record({
          key: fc.constantFrom("A", "B"),
          ageMs: fc.integer({ min: 0, max: 70 * DAY }),
          usage: fc.integer({ min: 0, max: 5_000_000 }),
          byok: fc.integer({ min: 0, max: 2_000_000 }),
          ws: fc.constantFrom<"key" | "legacy" | "other">("key", "key", "key", "legacy", "other"),
        }),
        { minLength: 50, maxLength: 120 },
      );
      const items = fc.sample(arb, { numRuns: 1, seed: 20261118 })[0]!;
      const batch = items.map((it, i) => {
        const key = it.key === "A" ? keyA : keyB;
        const ws = it.ws === "legacy" ? null : it.ws === "other" ? otherWs : undefined;
        const at = NOW.getTime() - it.ageMs;
        const usage = it.usage / 1e9;
        const byok = it.byok / 1e9;
        sent.push({
          id: `r-${i}`,
          key,
          ws: ws === null ? defaultWs : (ws ?? (it.key === "A" ? defaultWs : otherWs)),
          at,
          usage: usdToNano(usage),
          byok: usdToNano(byok),
        });
        return record(`r-${i}`, key, at, usage, byok, ws);
      });
      for (let i = 0; i < batch.length; i += 40) {
        await ingestGenerations({ store, activity, clock }, orgId, batch.slice(i, i + 40));
      }
      // A retried batch: all duplicates, nothing counted twice.
      await ingestGenerations({ store, activity, clock }, orgId, batch.slice(0, 40));

      const report = await reconcileLedger({ store, activity, clock }, orgId);
      expect(report.drifts).toEqual([]);
      expect(report.inSync).toBe(true);
      expect(report.records).toEqual({ ledger: batch.length, activity: batch.length, pending: 0 });
      // Every (scope, id, window) with activity was compared: check the count independently.
      const cells = new Set<string>();
      for (const s of sent) {
        const d = new Date(s.at);
        for (const [scope, id] of [
          ["key", s.key],
          ["workspace", s.ws],
        ]) {
          cells.add(`${scope}/${id}/day/${dayIndex(d)}`);
          cells.add(`${scope}/${id}/week/${weekIndex(d)}`);
          cells.add(`${scope}/${id}/month/${monthIndex(d)}`);
          cells.add(`${scope}/${id}/all`);
        }
      }
      expect(report.compared).toBe(cells.size);

      const current = await reconcileLedger({ store, activity, clock }, orgId, { windows: "current" });
      expect(current.inSync).toBe(true);
      expect(current.compared).toBeLessThan(report.compared);
    });

    it("legacy activity stays with a deleted default workspace: ingest and reconcile follow the one rule", async () => {
      // An organization of its own, so the shared one's totals are untouched.
      const org = await createOrganization(store, clock, "Deleted default");
      const home = await insertWorkspace(store.db, {
        organizationId: org.organizationId,
        name: "Home",
        slug: "home",
        isDefault: false,
        createdBy: null,
        now: NOW,
      });
      const k = (await createKey(store, clock, org.organizationId, { name: "K", workspace_id: home })).data
        .hash;
      const at = NOW.getTime() - DAY;
      await ingestGenerations({ store, activity, clock }, org.organizationId, [
        record("dd-before", k, at, 0.25, 0, null),
      ]);
      // The default workspace goes away (its history stays with it, by the one rule).
      await softDeleteWorkspace(store.db, org.workspaceId, NOW);
      expect(await activityDefaultWorkspaceId(store.db, org.organizationId)).toBe(org.workspaceId);
      await ingestGenerations({ store, activity, clock }, org.organizationId, [
        record("dd-after", k, at, 0.5, 0, null),
      ]);

      const report = await reconcileLedger({ store, activity, clock }, org.organizationId);
      expect(report.drifts).toEqual([]);
      expect(report.records).toEqual({ ledger: 2, activity: 2, pending: 0 });
      // Both legacy records were counted to the deleted default, none to the key's workspace.
      const all = await store.db
        .selectFrom("usage_counters")
        .select(["scope_id", "usage_nano"])
        .where("organization_id", "=", org.organizationId)
        .where("scope", "=", "workspace")
        .where("window", "=", "all")
        .execute();
      expect(all.map((r) => [r.scope_id, String(r.usage_nano)])).toEqual([
        [org.workspaceId, String(usdToNano(0.75))],
      ]);
    });

    it("reports a tampered counter row: that window only, with both amounts", async () => {
      const target = sent.find((s) => s.key === keyB && s.usage > 0n)!;
      const index = monthIndex(new Date(target.at));
      const row = await store.db
        .selectFrom("usage_counters")
        .selectAll()
        .where("scope", "=", "key")
        .where("scope_id", "=", keyB)
        .where("window", "=", "month")
        .where("window_index", "=", index)
        .executeTakeFirstOrThrow();
      const tamper = (delta: bigint) =>
        store.db
          .updateTable("usage_counters")
          .set((eb) => ({ usage_nano: eb("usage_nano", "+", delta) }))
          .where("scope", "=", "key")
          .where("scope_id", "=", keyB)
          .where("window", "=", "month")
          .where("window_index", "=", index)
          .execute();
      await tamper(7n);
      try {
        const report = await reconcileLedger({ store, activity, clock }, orgId);
        expect(report.inSync).toBe(false);
        expect(report.drifts).toHaveLength(1);
        const [d] = report.drifts;
        const expected = sent
          .filter((s) => s.key === keyB && monthIndex(new Date(s.at)) === index)
          .reduce((a, s) => a + s.usage, 0n);
        expect(d).toMatchObject({
          scope: "key",
          scopeId: keyB,
          name: "B",
          window: "month",
          windowIndex: index,
        });
        expect(d!.activity.usage).toBe(expected);
        expect(d!.ledger.usage).toBe(expected + 7n);
        expect(d!.ledger.byok).toBe(d!.activity.byok);
        expect(BigInt(row.usage_nano as unknown as string)).toBe(expected);
        expect(d!.current).toBe(index === monthIndex(NOW));
      } finally {
        await tamper(-7n);
      }
      expect((await reconcileLedger({ store, activity, clock }, orgId)).inSync).toBe(true);
    });

    /** What the drifts must be when these sent records are missing from the activity store. */
    function expectedDrifts(missing: typeof sent): Map<string, { usage: bigint; byok: bigint }> {
      const out = new Map<string, { usage: bigint; byok: bigint }>();
      for (const m of missing) {
        const d = new Date(m.at);
        for (const [scope, id] of [
          ["key", m.key],
          ["workspace", m.ws],
        ]) {
          for (const [w, i] of [
            ["day", dayIndex(d)],
            ["week", weekIndex(d)],
            ["month", monthIndex(d)],
            ["all", 0],
          ] as const) {
            const k = `${scope}/${id}/${w}/${i}`;
            const prev = out.get(k) ?? { usage: 0n, byok: 0n };
            out.set(k, { usage: prev.usage + m.usage, byok: prev.byok + m.byok });
          }
        }
      }
      return out;
    }
    const driftMap = (r: Awaited<ReturnType<typeof reconcileLedger>>) =>
      new Map(
        r.drifts.map((d) => [
          `${d.scope}/${d.scopeId}/${d.window}/${d.windowIndex}`,
          { usage: d.ledger.usage - d.activity.usage, byok: d.ledger.byok - d.activity.byok },
        ]),
      );
    const missing: typeof sent = [];

    it("reports an activity row the ledger counted but the activity store never got, in every window of its key and workspace", async () => {
      drop.add("lost-1");
      const at = NOW.getTime() - 3 * DAY;
      await ingestGenerations({ store, activity, clock }, orgId, [record("lost-1", keyA, at, 0.25, 0.125)]);
      // Buffered batches are written after the answer: drop the row when it is written.
      if (activity.exclusive) await drainIngestBuffer(store, activity.exclusive);
      drop.clear();
      const lost = { id: "lost-1", key: keyA, ws: defaultWs, at, usage: 250_000_000n, byok: 125_000_000n };
      missing.push(lost);
      const report = await reconcileLedger({ store, activity, clock }, orgId);
      expect(report.inSync).toBe(false);
      expect(report.records).toEqual({ ledger: sent.length + 1, activity: sent.length, pending: 0 });
      expect(report.drifts).toHaveLength(8);
      expect(driftMap(report)).toEqual(expectedDrifts(missing));
      // A retry is a duplicate (the id is claimed): the ledger is not counted twice, the row stays missing.
      const retry = await ingestGenerations({ store, activity, clock }, orgId, [
        record("lost-1", keyA, at, 0.25, 0.125),
      ]);
      expect(retry).toEqual({ accepted: 0, duplicates: 1 });
      expect(driftMap(await reconcileLedger({ store, activity, clock }, orgId))).toEqual(
        expectedDrifts(missing),
      );
    });

    it("reports an activity row deleted from the activity store", async () => {
      const victim = sent.find((s) => s.usage > 0n && s.byok > 0n)!;
      const sql =
        activity.dialect === "duckdb"
          ? "DELETE FROM generations WHERE organization_id = $org AND id = $id"
          : "DELETE FROM generations WHERE organization_id = {org:String} AND id = {id:String}";
      expect(
        await activity.query({ sql, params: { org: orgId, id: victim.id } }, { timeoutMs: 10_000 }),
      ).toEqual(activity.dialect === "duckdb" ? [{ Count: 1n }] : []);
      missing.push(victim);
      const report = await reconcileLedger({ store, activity, clock }, orgId);
      expect(report.inSync).toBe(false);
      expect(report.records.ledger - report.records.activity).toBe(2);
      expect(driftMap(report)).toEqual(expectedDrifts(missing));
    });

    it("labels windows and binds the organization in the dialect's placeholder syntax", () => {
      expect(windowLabel("day", dayIndex(NOW))).toBe("day 2026-11-18");
      expect(windowLabel("week", weekIndex(NOW))).toBe("week of 2026-11-16");
      expect(windowLabel("month", monthIndex(NOW))).toBe("month 2026-11");
      expect(windowLabel("all", 0)).toBe("all time");
      const q = activityTotalsQuery(activity.dialect, "o'rg");
      expect(q.params).toEqual({ org: "o'rg" });
      expect(q.sql).not.toContain("o'rg");
      expect(q.sql).toContain(activity.dialect === "duckdb" ? "$org" : "{org:String}");
    });
  });
}
