import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { addUsage, readKeyAndWorkspaceUsage } from "../../src/domain/usage/ledger.js";
import { QueryTemplate } from "../../src/stores/query-template.js";
import type { Db } from "../../src/stores/record-store.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`compiled query templates on ${f.name}`, () => {
    let store: Awaited<ReturnType<typeof f.open>>;
    beforeAll(async () => {
      store = await f.open();
    });
    afterAll(() => store?.dispose());

    it("runs each call with its own values, on the store and inside its transactions", async () => {
      const byId = new QueryTemplate((db: Db, _shape, org: string) =>
        db
          .selectFrom("activity_versions")
          .select(["organization_id", "version"])
          .where("organization_id", "=", org)
          .compile(),
      );
      await store.db
        .insertInto("activity_versions")
        .values([
          { organization_id: "qt-a", version: 3 },
          { organization_id: "qt-b", version: 7 },
        ])
        .execute();
      const a = await byId.execute(store.db, "", "qt-a");
      const b = await store.transaction((trx) => byId.execute(trx, "", "qt-b"));
      const none = await byId.execute(store.db, "", "qt-none");
      expect(a.rows.map((r) => Number(r.version))).toEqual([3]);
      expect(b.rows.map((r) => Number(r.version))).toEqual([7]);
      expect(none.rows).toEqual([]);
    });

    it("compiles one statement per shape", async () => {
      const inList = new QueryTemplate((db: Db, _shape, ...orgs: string[]) =>
        db
          .selectFrom("activity_versions")
          .select("organization_id")
          .where("organization_id", "in", orgs)
          .compile(),
      );
      const one = await inList.execute(store.db, "1", "qt-a");
      const two = await inList.execute(store.db, "2", "qt-a", "qt-b");
      expect(one.rows.map((r) => r.organization_id)).toEqual(["qt-a"]);
      expect(two.rows.map((r) => r.organization_id).sort()).toEqual(["qt-a", "qt-b"]);
    });

    it("refuses a template that writes an argument into the SQL or changes it", async () => {
      const inlined = new QueryTemplate((db: Db, _shape, org: string) =>
        sql`select ${sql.lit(org)} as x`.compile(db),
      );
      await expect(inlined.execute(store.db, "", "qt-a")).rejects.toThrow(/SQL text/);
      const changed = new QueryTemplate((db: Db, _shape, org: string) =>
        sql`select ${org + "!"} as x`.compile(db),
      );
      await expect(changed.execute(store.db, "", "qt-a")).rejects.toThrow(/changed/);
    });

    it("reads the key's and the workspace's windows in every shape", async () => {
      const at = new Date("2026-11-22T12:00:00Z");
      const e = {
        organizationId: "org",
        keyHash: "qt-key",
        workspaceId: "qt-ws",
        at,
        usageNano: 5n,
        byokNano: 1n,
      };
      await store.transaction((trx) => addUsage(trx, e));
      const both = await readKeyAndWorkspaceUsage(store.db, "qt-key", "qt-ws", at);
      const keyOnly = await readKeyAndWorkspaceUsage(store.db, "qt-key", null, at);
      const wsOnly = await readKeyAndWorkspaceUsage(store.db, null, "qt-ws", at);
      const nextMonth = await readKeyAndWorkspaceUsage(
        store.db,
        "qt-key",
        "qt-ws",
        new Date("2026-12-02T00:00:00Z"),
      );
      expect(both.key.day).toEqual({ usage: 5n, byok: 1n });
      expect(both.workspace.month).toEqual({ usage: 5n, byok: 1n });
      expect(keyOnly.key.week.usage).toBe(5n);
      expect(keyOnly.workspace.week.usage).toBe(0n);
      expect(wsOnly.workspace.all.usage).toBe(5n);
      expect(wsOnly.key.all.usage).toBe(0n);
      expect(nextMonth.key.month.usage).toBe(0n);
      expect(nextMonth.key.all.usage).toBe(5n);
    });
  });
}
