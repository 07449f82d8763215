import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { cliStoreTargets } from "../helpers/cli-targets.js";
import { gatehouse } from "../helpers/cli.js";

const TARGETS = cliStoreTargets("gh-reconcile-");

interface Report {
  in_sync: boolean;
  compared: number;
  records: { ledger: number; activity: number; pending: number };
  feedback: { stored: number; activity: number; queued: number };
  drifts: {
    scope: string;
    name: string;
    window: string;
    window_label: string;
    current: boolean;
    difference: { usage: number; byok_usage: number };
  }[];
}

for (const target of TARGETS) {
  describe.skipIf(target.skip)(`gatehouse reconcile on ${target.name}`, () => {
    let env: Record<string, string>;
    let dir: string;
    let open: () => Promise<RecordStore>;
    let cleanup: () => Promise<void>;
    let orgId: string;

    beforeAll(async () => {
      ({ env, dir, open, cleanup } = await target.setup());
      const demo = await gatehouse(
        ["demo", "--days", "40", "--generations", "1500", "--seed", "3", "--json"],
        env,
      );
      expect(demo.code).toBe(0);
      orgId = (JSON.parse(demo.stdout) as { organization_id: string }).organization_id;
    });
    afterAll(async () => {
      await cleanup?.();
    });

    /** Adds delta nano-USD to one old day counter of the `prod-api` key; returns its label. */
    async function tamper(delta: bigint): Promise<void> {
      const s = await open();
      try {
        const key = await s.db
          .selectFrom("api_keys")
          .select("hash")
          .where("name", "=", "prod-api")
          .executeTakeFirstOrThrow();
        const row = await s.db
          .selectFrom("usage_counters")
          .select("window_index")
          .where("scope", "=", "key")
          .where("scope_id", "=", key.hash)
          .where("window", "=", "day")
          .orderBy("window_index")
          .executeTakeFirstOrThrow();
        await s.db
          .updateTable("usage_counters")
          .set((eb) => ({ byok_nano: eb("byok_nano", "+", delta) }))
          .where("scope", "=", "key")
          .where("scope_id", "=", key.hash)
          .where("window", "=", "day")
          .where("window_index", "=", row.window_index)
          .execute();
      } finally {
        await s.close();
      }
    }

    it("finds no drift after the demo's ingest (exit code 0)", async () => {
      const run = await gatehouse(["reconcile"], env);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Reconciled organization Acme (demo) (${orgId})`);
      expect(run.stdout).toMatch(
        /generations:\s+1,500 accepted \(record store\), 1,500 in the activity store/,
      );
      expect(run.stdout).toContain("No drift: the ledger matches the activity store.");
      const feedback = /feedback:\s+(\d+) stored \(record store\), (\d+) in the activity store\n/.exec(
        run.stdout,
      );
      expect(Number(feedback?.[1])).toBeGreaterThan(0);
      expect(feedback?.[2]).toBe(feedback?.[1]);
      const json = await gatehouse(["reconcile", "--json", "--org", orgId], env);
      const report = JSON.parse(json.stdout) as Report;
      expect(report.feedback).toEqual({
        stored: Number(feedback?.[1]),
        activity: Number(feedback?.[1]),
        queued: 0,
      });
      expect(report).toMatchObject({
        in_sync: true,
        drifts: [],
        records: { ledger: 1_500, activity: 1_500 },
      });
      expect(report.compared).toBeGreaterThan(100);
    });

    it("reports a tampered counter in a table and exits 1; --current ignores past windows", async () => {
      await tamper(42n);
      try {
        const run = await gatehouse(["reconcile", "--recheck-ms", "10"], env);
        expect(run.code).toBe(1);
        expect(run.stdout).toMatch(
          /SCOPE\s+NAME\s+ID\s+WINDOW\s+LEDGER USAGE\s+ACTIVITY USAGE\s+LEDGER BYOK\s+ACTIVITY BYOK/,
        );
        expect(run.stdout).toMatch(/key\s+prod-api\s+[0-9a-f]{12}…\s+day \d{4}-\d{2}-\d{2}\s/);
        expect(run.stderr).toContain("gatehouse: 1 ledger counter differs from the activity store");

        const json = await gatehouse(["reconcile", "--json", "--recheck-ms", "0"], env);
        expect(json.code).toBe(1);
        const report = JSON.parse(json.stdout) as Report;
        expect(report.in_sync).toBe(false);
        expect(report.drifts).toHaveLength(1);
        expect(report.drifts[0]).toMatchObject({
          scope: "key",
          name: "prod-api",
          window: "day",
          current: false,
          difference: { usage: 0, byok_usage: 42e-9 },
        });

        const current = await gatehouse(["reconcile", "--current"], env);
        expect(current.code).toBe(0);
      } finally {
        await tamper(-42n);
      }
      expect((await gatehouse(["reconcile"], env)).code).toBe(0);
    });

    it("--all checks every organization, prints each, and exits 1 if any drifts", async () => {
      const created = await gatehouse(["org", "create", "Second", "--json"], env);
      expect(created.code).toBe(0);
      const secondId = (JSON.parse(created.stdout) as { organization_id: string }).organization_id;

      const clean = await gatehouse(["reconcile", "--all"], env);
      expect(clean.stderr).toBe("");
      expect(clean.code).toBe(0);
      expect(clean.stdout).toContain(`Reconciled organization Acme (demo) (${orgId})`);
      expect(clean.stdout).toContain(`Reconciled organization Second (${secondId})`);
      expect(clean.stdout).toContain("2 organizations: no drift.");

      await tamper(42n);
      try {
        const run = await gatehouse(["reconcile", "--all", "--json", "--recheck-ms", "0"], env);
        expect(run.code).toBe(1);
        const all = JSON.parse(run.stdout) as {
          in_sync: boolean;
          organizations: (Report & { organization_id: string })[];
        };
        expect(all.in_sync).toBe(false);
        expect(all.organizations.map((o) => [o.organization_id, o.in_sync])).toEqual([
          [orgId, false],
          [secondId, true],
        ]);
        expect(all.organizations[0]!.drifts).toHaveLength(1);
        expect(run.stderr).toContain(
          `gatehouse: drift in 1 of 2 organizations: Acme (demo) (${orgId}): 1 ledger counter differs`,
        );
      } finally {
        await tamper(-42n);
      }

      const both = await gatehouse(["reconcile", "--all", "--org", orgId], env);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain("--all: not with --org");
    });

    it("reports feedback missing from the activity store, and what the queue still holds for it", async () => {
      const before = JSON.parse((await gatehouse(["reconcile", "--json"], env)).stdout) as Report;
      const activity = await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") });
      let victim: string;
      try {
        const [row] = await activity.query(
          {
            sql: "SELECT feedback_id FROM generation_feedback WHERE organization_id = $org ORDER BY feedback_id LIMIT 1",
            params: { org: orgId },
          },
          { timeoutMs: 10_000 },
        );
        victim = row!.feedback_id as string;
        await activity.query(
          { sql: "DELETE FROM generation_feedback WHERE feedback_id = $id", params: { id: victim } },
          { timeoutMs: 10_000 },
        );
      } finally {
        await activity.close();
      }
      const n = before.feedback.stored;
      const run = await gatehouse(["reconcile", "--recheck-ms", "10"], env);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(
        "The counters match, but the activity store does not hold every feedback submission.",
      );
      expect(run.stderr).toContain(
        `gatehouse: the record store holds ${n} feedback submissions, the activity store ${n - 1}`,
      );
      // Queued for the activity store (as after a failed write): the report says so.
      const s = await open();
      try {
        const fb = await s.db
          .selectFrom("generation_feedback")
          .selectAll()
          .where("id", "=", victim)
          .executeTakeFirstOrThrow();
        await s.db
          .insertInto("feedback_activity_queue")
          .values({
            feedback_id: fb.id,
            organization_id: fb.organization_id,
            generation_id: fb.generation_id,
            generation_created_at: new Date(0).toISOString(),
            category: fb.category,
            created_at: fb.created_at,
          })
          .execute();
      } finally {
        await s.close();
      }
      const json = await gatehouse(["reconcile", "--json", "--recheck-ms", "0"], env);
      expect(json.code).toBe(1);
      expect((JSON.parse(json.stdout) as Report).feedback).toEqual({ stored: n, activity: n - 1, queued: 1 });
    });

    it("reports a generation deleted from the activity store in every window of its key and workspace", async () => {
      const activity = await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") });
      try {
        const [victim] = await activity.query(
          {
            sql: "SELECT id FROM generations WHERE organization_id = $org AND usage_nano > 0 ORDER BY id LIMIT 1",
            params: { org: orgId },
          },
          { timeoutMs: 10_000 },
        );
        await activity.query(
          { sql: "DELETE FROM generations WHERE id = $id", params: { id: victim!.id as string } },
          { timeoutMs: 10_000 },
        );
      } finally {
        await activity.close();
      }
      const run = await gatehouse(["reconcile", "--json", "--recheck-ms", "0"], env);
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as Report;
      expect(report.records).toEqual({ ledger: 1_500, activity: 1_499, pending: 0 });
      expect(report.drifts).toHaveLength(8);
      expect(report.drifts.filter((d) => d.scope === "key").map((d) => d.window)).toEqual([
        "all",
        "month",
        "week",
        "day",
      ]);
      const diffs = new Set(report.drifts.map((d) => d.difference.usage));
      expect(diffs.size).toBe(1);
      expect([...diffs][0]).toBeGreaterThan(0);
    });
  });
}
