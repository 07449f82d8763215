import { afterEach, describe, expect, it } from "vitest";
import { authenticate } from "../../src/domain/auth/authenticate.js";
import { readThroughPolicy } from "../../src/domain/policy/read-through.js";
import { bootstrap } from "../../src/domain/organizations/bootstrap.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { ManualClock } from "../../src/lib/clock.js";
import { hashKey, KEY_PREFIX } from "../../src/lib/ids.js";
import { insertWorkspace } from "../../src/domain/workspaces/workspace-repo.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

const BOOT_KEY = `sk-gh-v1-${"0b".repeat(32)}`;

async function counts(store: RecordStore) {
  const count = async (table: "organizations" | "workspaces" | "api_keys") => {
    const row = await store.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return {
    organizations: await count("organizations"),
    workspaces: await count("workspaces"),
    keys: await count("api_keys"),
  };
}

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`bootstrap on ${f.name}`, () => {
    const clock = new ManualClock(new Date("2026-11-18T12:00:00.000Z"));
    let store: Awaited<ReturnType<typeof f.open>> | undefined;
    const open = async () => {
      store = await f.open();
      return store;
    };
    afterEach(async () => {
      await store?.dispose();
      store = undefined;
    });

    it("creates an organization, its default workspace and a generated management key on an empty store", async () => {
      const s = await open();
      const result = await bootstrap(s, clock, null);
      expect(result.generatedKey).toMatch(new RegExp(`^${KEY_PREFIX}[0-9a-f]{64}$`));
      expect(await counts(s)).toEqual({ organizations: 1, workspaces: 1, keys: 1 });

      const ws = await s.db.selectFrom("workspaces").selectAll().executeTakeFirstOrThrow();
      expect(ws.organization_id).toBe(result.organizationId);
      expect(ws.slug).toBe("default");
      expect(Number(ws.is_default)).toBe(1);

      const key = await s.db.selectFrom("api_keys").selectAll().executeTakeFirstOrThrow();
      // Only the hash is stored, never the key itself.
      expect(key.hash).toBe(hashKey(result.generatedKey!));
      expect(Object.values(key).map(String).join(" ")).not.toContain(
        result.generatedKey!.slice(KEY_PREFIX.length),
      );

      const principal = await authenticate(readThroughPolicy(s.db), clock, `Bearer ${result.generatedKey}`);
      expect(principal).toMatchObject({
        organizationId: result.organizationId,
        workspaceId: ws.id,
        isManagement: true,
      });
    });

    it("with GATEHOUSE_BOOTSTRAP_KEY creates exactly that key and reports nothing to print", async () => {
      const s = await open();
      const result = await bootstrap(s, clock, BOOT_KEY);
      expect(result.generatedKey).toBeNull();
      expect(await counts(s)).toEqual({ organizations: 1, workspaces: 1, keys: 1 });
      const principal = await authenticate(readThroughPolicy(s.db), clock, `Bearer ${BOOT_KEY}`);
      expect(principal.isManagement).toBe(true);
      expect(principal.organizationId).toBe(result.organizationId);
    });

    it("a second run changes nothing, with or without the bootstrap key", async () => {
      const s = await open();
      const first = await bootstrap(s, clock, null);
      const before = await counts(s);
      clock.advance(60_000);
      const again = await bootstrap(s, clock, null);
      expect(again).toEqual({ generatedKey: null, organizationId: first.organizationId });
      expect(await counts(s)).toEqual(before);

      const withKey = await bootstrap(s, clock, BOOT_KEY); // adds the operator's key once ...
      expect(withKey.organizationId).toBe(first.organizationId);
      const afterKey = await counts(s);
      expect(afterKey).toEqual({ ...before, keys: before.keys + 1 });
      await bootstrap(s, clock, BOOT_KEY); // ... and only once
      expect(await counts(s)).toEqual(afterKey);
      const principal = await authenticate(readThroughPolicy(s.db), clock, `Bearer ${BOOT_KEY}`);
      expect(principal.organizationId).toBe(first.organizationId);
      expect(principal.isManagement).toBe(true);
    });

    it("instances starting together with the same bootstrap key all start, with one organization and one key", async () => {
      const s = await open();
      const results = await Promise.all([1, 2, 3, 4].map(() => bootstrap(s, clock, BOOT_KEY)));
      expect(new Set(results.map((r) => r.organizationId)).size).toBe(1);
      expect(results.every((r) => r.generatedKey === null)).toBe(true);
      expect(await counts(s)).toEqual({ organizations: 1, workspaces: 1, keys: 1 });
      await expect(authenticate(readThroughPolicy(s.db), clock, `Bearer ${BOOT_KEY}`)).resolves.toMatchObject(
        {
          isManagement: true,
        },
      );
    });

    it("instances starting together without a bootstrap key create one organization and print one key", async () => {
      const s = await open();
      const results = await Promise.all([1, 2, 3, 4].map(() => bootstrap(s, clock, null)));
      expect(new Set(results.map((r) => r.organizationId)).size).toBe(1);
      expect(results.filter((r) => r.generatedKey !== null)).toHaveLength(1);
      expect(await counts(s)).toEqual({ organizations: 1, workspaces: 1, keys: 1 });
    });

    it("with the bootstrap key, a restart is a no-op", async () => {
      const s = await open();
      await bootstrap(s, clock, BOOT_KEY);
      const before = await counts(s);
      const rows = await s.db.selectFrom("api_keys").selectAll().execute();
      await bootstrap(s, clock, BOOT_KEY);
      expect(await counts(s)).toEqual(before);
      expect(await s.db.selectFrom("api_keys").selectAll().execute()).toEqual(rows);
    });

    it("leaves a store that already has organizations alone (no key generated)", async () => {
      const s = await open();
      const existing = await createOrganization(s, clock, "Made by the CLI");
      const before = await counts(s);
      const result = await bootstrap(s, clock, null);
      expect(result).toEqual({ generatedKey: null, organizationId: existing.organizationId });
      expect(await counts(s)).toEqual(before);
    });

    it.each([
      ["deleted", { deleted_at: "2026-11-18T12:00:00.000Z" }],
      ["disabled", { disabled: 1 }],
      ["expired", { expires_at: "2026-11-01T00:00:00.000Z" }],
      ["demoted to an ordinary key", { is_management: 0 }],
    ])("revives a bootstrap key that was %s", async (_, change) => {
      const s = await open();
      await bootstrap(s, clock, BOOT_KEY);
      await s.db.updateTable("api_keys").set(change).where("hash", "=", hashKey(BOOT_KEY)).execute();
      const broken = await authenticate(readThroughPolicy(s.db), clock, `Bearer ${BOOT_KEY}`).then(
        (p) => p.isManagement,
        () => false,
      );
      expect(broken).toBe(false);

      const before = await counts(s);
      await bootstrap(s, clock, BOOT_KEY);
      expect(await counts(s)).toEqual(before);
      const principal = await authenticate(readThroughPolicy(s.db), clock, `Bearer ${BOOT_KEY}`);
      expect(principal.isManagement).toBe(true);
    });

    it("puts a new bootstrap key in the oldest live workspace when the default one is gone", async () => {
      const s = await open();
      const first = await bootstrap(s, clock, null);
      const defaultWs = await s.db.selectFrom("workspaces").selectAll().executeTakeFirstOrThrow();
      // A second workspace, then the default one is deleted.
      clock.advance(1_000);
      const otherWs = await insertWorkspace(s.db, {
        organizationId: first.organizationId,
        name: "Other",
        slug: "other",
        isDefault: false,
        createdBy: null,
        now: clock.now(),
      });
      await s.db
        .updateTable("workspaces")
        .set({ deleted_at: clock.now().toISOString() })
        .where("id", "=", defaultWs.id)
        .execute();

      await bootstrap(s, clock, BOOT_KEY);
      const principal = await authenticate(readThroughPolicy(s.db), clock, `Bearer ${BOOT_KEY}`);
      expect(principal.workspaceId).toBe(otherWs);
      expect(principal.organizationId).toBe(first.organizationId);
    });
  });
}
