import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticate } from "../../src/domain/auth/authenticate.js";
import { readThroughPolicy } from "../../src/domain/policy/read-through.js";
import { systemClock } from "../../src/lib/clock.js";
import { hashKey } from "../../src/lib/ids.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { cliStoreTargets } from "../helpers/cli-targets.js";
import { gatehouse, type CliRun } from "../helpers/cli.js";

interface Created {
  organization_id: string;
  workspace_id: string;
  management_key: string;
  management_key_hash: string;
  name: string;
}

const TARGETS = cliStoreTargets("gh-cli-");

for (const target of TARGETS) {
  describe.skipIf(target.skip)(`gatehouse CLI on ${target.name}`, () => {
    let env: Record<string, string>;
    let cleanup: () => Promise<void>;
    let store: RecordStore;
    let t: TestApp;
    let acme: Created;
    let globex: Created;
    let humanOutput: CliRun;

    beforeAll(async () => {
      const s = await target.setup();
      env = s.env;
      cleanup = s.cleanup;
      // The first run creates the store (migrations); the second runs against an existing one.
      const a = await gatehouse(["org", "create", "Acme", "--json"], env);
      const g = await gatehouse(["org", "create", "Globex"], env);
      expect(a).toMatchObject({ code: 0, stderr: "" });
      expect(g).toMatchObject({ code: 0, stderr: "" });
      acme = JSON.parse(a.stdout) as Created;
      humanOutput = g;
      const field = (label: string) => new RegExp(`${label}:\\s+(\\S+)`).exec(g.stdout)?.[1] ?? "";
      globex = {
        name: "Globex",
        organization_id: field("organization_id"),
        workspace_id: field("workspace_id"),
        management_key: field("management_key"),
        management_key_hash: field("key hash"),
      };
      store = await s.open();
      // An app on the same store: the keys the CLI printed must work against the API at once.
      t = await makeTestApp({ store });
    });

    afterAll(async () => {
      await t?.close();
      await store?.close();
      await cleanup?.();
    });

    it("org create prints the organization, its default workspace and the key once", () => {
      expect(acme.name).toBe("Acme");
      for (const org of [acme, globex]) {
        expect(org.organization_id).toMatch(/^[0-9a-f-]{36}$/);
        expect(org.workspace_id).toMatch(/^[0-9a-f-]{36}$/);
        expect(org.management_key).toMatch(/^sk-gh-v1-[0-9a-f]{64}$/);
        expect(org.management_key_hash).toBe(hashKey(org.management_key));
      }
      expect(humanOutput.stdout).toContain('Organization "Globex" created.');
      expect(humanOutput.stdout).toContain("shown only this once");
      expect(humanOutput.stdout.split(globex.management_key)).toHaveLength(2); // exactly once
    });

    it("stores only the hash of each key", async () => {
      const rows = await store.db.selectFrom("api_keys").select(["hash", "label", "name"]).execute();
      const dump = rows.map((r) => Object.values(r).join(" ")).join("\n");
      for (const org of [acme, globex]) {
        expect(dump).toContain(hashKey(org.management_key));
        expect(dump).not.toContain(org.management_key);
      }
    });

    it("each printed key is a management key of its own organization only", async () => {
      for (const org of [acme, globex]) {
        const p = await authenticate(
          readThroughPolicy(store.db),
          systemClock,
          `Bearer ${org.management_key}`,
        );
        expect(p).toMatchObject({
          organizationId: org.organization_id,
          workspaceId: org.workspace_id,
          isManagement: true,
        });
        const res = await t.call({ method: "GET", url: "/api/v1/workspaces", auth: org.management_key });
        expect(res.statusCode).toBe(200);
        const ids = res.json<{ data: { id: string }[] }>().data.map((w) => w.id);
        expect(ids).toEqual([org.workspace_id]);
      }
      // Acme's key cannot see Globex's workspace.
      const cross = await t.call({
        method: "GET",
        url: `/api/v1/workspaces/${globex.workspace_id}`,
        auth: acme.management_key,
      });
      expect(cross.statusCode).toBe(404);
    });

    it("org list shows id, name and created_at, and never a key", async () => {
      const human = await gatehouse(["org", "list"], env);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^ID\s+NAME\s+CREATED_AT\n/);
      for (const org of [acme, globex]) {
        expect(human.stdout).toContain(org.organization_id);
        expect(human.stdout).not.toContain(org.management_key);
        expect(human.stdout).not.toContain(org.management_key_hash);
      }
      const json = await gatehouse(["org", "list", "--json"], env);
      expect(json.code).toBe(0);
      const rows = JSON.parse(json.stdout) as { id: string; name: string; created_at: string }[];
      // Test organization comes from makeTestApp on the same store.
      expect(rows.map((r) => r.name).sort()).toEqual(["Acme", "Globex", "Test organization"]);
      for (const r of rows) {
        expect(Object.keys(r).sort()).toEqual(["created_at", "id", "name"]);
        expect(r.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      }
    });

    it("keys create-management adds a working management key to one organization (rotation)", async () => {
      const run = await gatehouse(
        ["keys", "create-management", "--org", acme.organization_id, "--name", "Rotated", "--json"],
        env,
      );
      expect(run).toMatchObject({ code: 0, stderr: "" });
      const created = JSON.parse(run.stdout) as {
        organization_id: string;
        workspace_id: string;
        name: string;
        management_key: string;
        hash: string;
      };
      expect(created).toMatchObject({
        organization_id: acme.organization_id,
        workspace_id: acme.workspace_id,
        name: "Rotated",
        hash: hashKey(created.management_key),
      });
      const p = await authenticate(
        readThroughPolicy(store.db),
        systemClock,
        `Bearer ${created.management_key}`,
      );
      expect(p).toMatchObject({ organizationId: acme.organization_id, isManagement: true });
      // The old key keeps working until the operator deletes it.
      await expect(
        authenticate(readThroughPolicy(store.db), systemClock, `Bearer ${acme.management_key}`),
      ).resolves.toBeDefined();
      const res = await t.call({ method: "GET", url: "/api/v1/workspaces", auth: created.management_key });
      expect(res.json<{ data: { id: string }[] }>().data.map((w) => w.id)).toEqual([acme.workspace_id]);

      const human = await gatehouse(["keys", "create-management", "--org", globex.organization_id], env);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain('Management key "Management key" created.');
      expect(human.stdout).toMatch(/management_key:\s+sk-gh-v1-[0-9a-f]{64}/);
    });

    it("exits 2 with a clear message on usage errors, 1 on an unknown organization", async () => {
      const [noName, blankName, badUuid, noOrg, unknownCmd, unknownOrg] = await Promise.all([
        gatehouse(["org", "create"], env),
        gatehouse(["org", "create", "   "], env),
        gatehouse(["keys", "create-management", "--org", "acme"], env),
        gatehouse(["keys", "create-management"], env),
        gatehouse(["org", "destroy"], env),
        gatehouse(["keys", "create-management", "--org", "00000000-0000-4000-8000-000000000000"], env),
      ]);
      expect(noName.code).toBe(2);
      expect(noName.stderr).toContain("missing required argument 'name'");
      expect(blankName).toMatchObject({ code: 2, stdout: "" });
      expect(blankName.stderr).toContain("NAME: must not be empty");
      expect(badUuid.code).toBe(2);
      expect(badUuid.stderr).toContain("--org: must be a UUID");
      expect(noOrg.code).toBe(2);
      expect(noOrg.stderr).toContain("--org");
      expect(unknownCmd.code).toBe(2);
      expect(unknownCmd.stderr).toContain("unknown command 'destroy'");
      expect(unknownOrg).toMatchObject({ code: 1, stdout: "" });
      expect(unknownOrg.stderr).toContain("organization 00000000-0000-4000-8000-000000000000 not found");
    });

    it("exits 2 and names the variable when the environment is invalid, creating nothing", async () => {
      const before = await store.db.selectFrom("organizations").select("id").execute();
      const [port, db] = await Promise.all([
        gatehouse(["org", "create", "Nope"], { ...env, PORT: "abc" }),
        gatehouse(["org", "create", "Nope"], { ...env, DATABASE_URL: "mysql://localhost/x" }),
      ]);
      expect(port).toMatchObject({ code: 2, stdout: "" });
      expect(port.stderr).toContain("PORT: must be an integer");
      expect(db).toMatchObject({ code: 2, stdout: "" });
      expect(db.stderr).toContain("DATABASE_URL: must be a postgres:// or postgresql:// URL");
      expect(await store.db.selectFrom("organizations").select("id").execute()).toHaveLength(before.length);
    });

    it("prints help with exit code 0", async () => {
      const help = await gatehouse(["--help"], env);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("org");
      expect(help.stdout).toContain("keys");
    });
  });
}

describe("gatehouse CLI failures", () => {
  it("exits 1 with the cause when the record store cannot be reached", async () => {
    const run = await gatehouse(["org", "list"], { DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^gatehouse: .*ECONNREFUSED/);
  });
});
