import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordStore } from "../../src/stores/record-store.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { cliStoreTargets } from "../helpers/cli-targets.js";
import { gatehouse } from "../helpers/cli.js";

/**
 * `gatehouse members add|list|remove` (docs/members.md) through the real bin, on SQLite and
 * PostgreSQL: what the CLI writes is what the API then serves, and the API's rules hold (unique
 * email, no removal while the member has active keys).
 */

interface CreatedOrg {
  organization_id: string;
  workspace_id: string;
  management_key: string;
}
interface Member {
  organization_id: string;
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: string;
}

for (const target of cliStoreTargets("gh-cli-members-")) {
  describe.skipIf(target.skip)(`gatehouse members on ${target.name}`, () => {
    let env: Record<string, string>;
    let cleanup: () => Promise<void>;
    let store: RecordStore;
    let t: TestApp;
    let acme: CreatedOrg;
    let globex: CreatedOrg;
    let ada: Member;

    beforeAll(async () => {
      const s = await target.setup();
      env = s.env;
      cleanup = s.cleanup;
      const a = await gatehouse(["org", "create", "Acme", "--json"], env);
      expect(a).toMatchObject({ code: 0, stderr: "" });
      acme = JSON.parse(a.stdout) as CreatedOrg;
      const g = await gatehouse(["org", "create", "Globex", "--json"], env);
      globex = JSON.parse(g.stdout) as CreatedOrg;
      const add = await gatehouse(
        [
          "members",
          "add",
          "--email",
          " Ada@Example.COM",
          "--first-name",
          "Ada",
          "--last-name",
          "Lovelace",
        ].concat(["--role", "org:admin", "--json"]),
        env,
      );
      expect(add).toMatchObject({ code: 0, stderr: "" });
      ada = JSON.parse(add.stdout) as Member;
      store = await s.open();
      // The test app adds an organization whose (manual) clock may make it the first one, so the
      // tests below name --org; the add above took the default.
      t = await makeTestApp({ store });
    });

    afterAll(async () => {
      await t?.close();
      await store?.close();
      await cleanup?.();
    });

    const api = (method: "GET" | "POST" | "DELETE", url: string, key: string, payload?: object) =>
      t.call({ method, url: `/api/v1${url}`, auth: key, ...(payload === undefined ? {} : { payload }) });

    it("add writes the member to the first organization by default; the API lists it", async () => {
      expect(ada).toEqual({
        organization_id: acme.organization_id,
        id: expect.stringMatching(/^user_[A-Za-z0-9_-]{24}$/),
        email: "ada@example.com",
        first_name: "Ada",
        last_name: "Lovelace",
        role: "org:admin",
      });
      const listed = await api("GET", "/organization/members", acme.management_key);
      expect(listed.json()).toEqual({
        data: [{ id: ada.id, email: ada.email, first_name: "Ada", last_name: "Lovelace", role: "org:admin" }],
        total_count: 1,
      });
      const ws = await api("GET", "/workspaces/default/members", acme.management_key);
      expect(ws.json()).toMatchObject({ data: [{ user_id: ada.id, role: "admin" }], total_count: 1 });
    });

    it("add --org, human output; list shows one organization's members only", async () => {
      const human = await gatehouse(
        ["members", "add", "--email", "grace@example.com", "--org", globex.organization_id],
        env,
      );
      expect(human).toMatchObject({ code: 0, stderr: "" });
      expect(human.stdout).toContain('Member grace@example.com added to "Globex".');
      expect(human.stdout).toMatch(/id:\s+user_/);
      expect(human.stdout).toMatch(/role:\s+org:member/);

      const [acmeList, globexList, globexHuman] = await Promise.all([
        gatehouse(["members", "list", "--org", acme.organization_id, "--json"], env),
        gatehouse(["members", "list", "--org", globex.organization_id, "--json"], env),
        gatehouse(["members", "list", "--org", globex.organization_id], env),
      ]);
      expect((JSON.parse(acmeList.stdout) as Member[]).map((m) => m.email)).toEqual(["ada@example.com"]);
      const globexMembers = JSON.parse(globexList.stdout) as Member[];
      expect(globexMembers).toEqual([
        {
          id: expect.stringMatching(/^user_/),
          email: "grace@example.com",
          first_name: null,
          last_name: null,
          role: "org:member",
        },
      ]);
      expect(globexHuman.stdout).toMatch(/^ID\s+EMAIL\s+ROLE\s+NAME\n/);
      expect(globexHuman.stdout).toContain(globexMembers[0]!.id);
      // The same email in another organization is another member.
      const again = await gatehouse(
        ["members", "add", "--email", "ada@example.com", "--org", globex.organization_id, "--json"],
        env,
      );
      expect(again.code).toBe(0);
      expect((JSON.parse(again.stdout) as Member).id).not.toBe(ada.id);
    });

    it("usage errors exit 2 naming the option, before anything is written; a duplicate email exits 1", async () => {
      const [badEmail, badRole, blankName, noEmail, badOrg, dup, unknownOrg] = await Promise.all([
        gatehouse(["members", "add", "--email", "not-an-email"], env),
        gatehouse(["members", "add", "--email", "x@example.com", "--role", "owner"], env),
        gatehouse(["members", "add", "--email", "x@example.com", "--first-name", "  "], env),
        gatehouse(["members", "add"], env),
        gatehouse(["members", "add", "--email", "x@example.com", "--org", "acme"], env),
        gatehouse(["members", "add", "--email", "ADA@example.com", "--org", acme.organization_id], env),
        gatehouse(["members", "list", "--org", "00000000-0000-4000-8000-000000000000"], env),
      ]);
      expect(badEmail).toMatchObject({ code: 2, stdout: "" });
      expect(badEmail.stderr).toContain("--email: must be an email address such as ada@example.com");
      expect(badRole).toMatchObject({ code: 2, stdout: "" });
      expect(badRole.stderr).toContain("--role: must be one of org:admin, org:member");
      expect(blankName.code).toBe(2);
      expect(blankName.stderr).toContain("--first-name: must not be blank");
      expect(noEmail.code).toBe(2);
      expect(noEmail.stderr).toContain("--email");
      expect(badOrg.code).toBe(2);
      expect(badOrg.stderr).toContain("--org: must be a UUID");
      expect(dup).toMatchObject({ code: 1, stdout: "" });
      expect(dup.stderr).toContain(
        "email: a member with email 'ada@example.com' already exists in this organization",
      );
      expect(unknownOrg.code).toBe(1);
      expect(unknownOrg.stderr).toContain("organization 00000000-0000-4000-8000-000000000000 not found");
      const rows = await store.db
        .selectFrom("members")
        .select("email")
        .where("email", "=", "x@example.com")
        .execute();
      expect(rows).toEqual([]);
    });

    it("remove by email or id: refused while the member has active keys, then drops it", async () => {
      const bob = JSON.parse(
        (
          await gatehouse(
            ["members", "add", "--email", "bob@example.com", "--org", acme.organization_id, "--json"],
            env,
          )
        ).stdout,
      ) as Member;
      const ws = (await api("POST", "/workspaces", acme.management_key, { name: "Lab", slug: "lab" })).json()
        .data;
      expect(
        (await api("POST", `/workspaces/${ws.id}/members/add`, acme.management_key, { user_ids: [bob.id] }))
          .statusCode,
      ).toBe(200);
      const key = await api("POST", "/keys", acme.management_key, {
        name: "bob's",
        creator_user_id: bob.id,
        workspace_id: ws.id,
      });
      expect(key.statusCode, key.body).toBe(201);

      const refused = await gatehouse(
        ["members", "remove", "Bob@Example.com", "--org", acme.organization_id],
        env,
      );
      expect(refused).toMatchObject({ code: 1, stdout: "" });
      expect(refused.stderr).toContain(`member ${bob.id} has 1 active API key`);

      expect((await api("DELETE", `/keys/${key.json().data.hash}`, acme.management_key)).statusCode).toBe(
        200,
      );
      const removed = await gatehouse(
        ["members", "remove", "bob@example.com", "--org", acme.organization_id, "--json"],
        env,
      );
      expect(removed).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse(removed.stdout)).toEqual({
        deleted: true,
        organization_id: acme.organization_id,
        member: {
          id: bob.id,
          email: "bob@example.com",
          first_name: null,
          last_name: null,
          role: "org:member",
        },
      });
      expect((await api("GET", `/workspaces/${ws.id}/members`, acme.management_key)).json()).toEqual({
        data: [],
        total_count: 0,
      });

      const [gone, wrongOrg] = await Promise.all([
        gatehouse(["members", "remove", bob.id, "--org", acme.organization_id], env),
        gatehouse(["members", "remove", ada.id, "--org", globex.organization_id], env),
      ]);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain(`no member ${bob.id} in "Acme"`);
      // Another organization's member is not found there, and stays.
      expect(wrongOrg.code).toBe(1);
      const human = await gatehouse(["members", "list", "--org", acme.organization_id], env);
      expect(human.stdout).toContain(ada.id);
      expect(human.stdout).not.toContain(bob.id);
    });
  });
}
