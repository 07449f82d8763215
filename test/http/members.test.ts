import { describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { useAppOnStore } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

/**
 * Organization and workspace members (docs/members.md) over HTTP, on SQLite and PostgreSQL: the
 * official routes (list, workspace list, bulk add and remove) and Gatehouse's extension (create,
 * update, delete), the rules around keys (`creator_user_id`), and isolation between organizations.
 * The test clock starts at 2026-11-18T12:00:00Z.
 */

interface Member {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: string;
}
interface Membership {
  id: string;
  workspace_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`members on ${f.name}`, () => {
    const env = useAppOnStore(f);

    const call = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, body?: unknown, auth?: string) =>
      env.t.call({
        method,
        url: `/api/v1${url}`,
        ...(body === undefined
          ? {}
          : { payload: JSON.stringify(body), headers: { "content-type": "application/json" } }),
        ...(auth === undefined ? {} : { auth }),
      });
    const ok = async <T = any>(status: number, ...args: Parameters<typeof call>): Promise<T> => {
      const res = await call(...args);
      expect(res.statusCode, res.body).toBe(status);
      return res.json<T>();
    };
    const error = async (status: number, ...args: Parameters<typeof call>) => {
      const res = await call(...args);
      expect(res.statusCode, res.body).toBe(status);
      const body = res.json<{ error: { code: number; message: string; metadata: unknown } }>();
      expect(body.error.code).toBe(status);
      return body.error;
    };
    let n = 0;
    const newMember = async (extra: Record<string, unknown> = {}, auth?: string): Promise<Member> =>
      (
        await ok<{ data: Member }>(
          201,
          "POST",
          "/organization/members",
          { email: `p${++n}@example.com`, ...extra },
          auth,
        )
      ).data;
    const newWorkspace = async (auth?: string): Promise<{ id: string; slug: string }> =>
      (
        await ok<{ data: { id: string; slug: string } }>(
          201,
          "POST",
          "/workspaces",
          { name: "Team", slug: `team-${++n}` },
          auth,
        )
      ).data;
    const newKey = async (body: Record<string, unknown>) =>
      ok<{ data: { hash: string }; key: string }>(201, "POST", "/keys", { name: "k", ...body });
    const memberRows = (workspaceId: string) =>
      env.store.db
        .selectFrom("workspace_members")
        .selectAll()
        .where("workspace_id", "=", workspaceId)
        .execute();

    describe("organization members (the extension's writes, the official list)", () => {
      it("create: 201 with the member; email trimmed and lower-cased, role org:member by default", async () => {
        const res = await ok<{ data: Member }>(201, "POST", "/organization/members", {
          email: "  Ada.Lovelace@Example.COM ",
          first_name: " Ada ",
          last_name: "Lovelace",
        });
        expect(res).toEqual({
          data: {
            id: expect.stringMatching(/^user_[A-Za-z0-9_-]{24}$/),
            email: "ada.lovelace@example.com",
            first_name: "Ada",
            last_name: "Lovelace",
            role: "org:member",
          },
        });
        const admin = await newMember({ role: "org:admin", first_name: null });
        expect(admin).toMatchObject({ role: "org:admin", first_name: null, last_name: null });
        expect(admin.id).not.toBe(res.data.id);
      });

      it("a duplicate email (any case) is 409 naming email, and nothing is stored", async () => {
        await newMember({ email: "dup@example.com" });
        const before = (await ok(200, "GET", "/organization/members?limit=100")).total_count;
        const e = await error(409, "POST", "/organization/members", { email: "DUP@example.com" });
        expect(e.message).toBe(
          "email: a member with email 'dup@example.com' already exists in this organization",
        );
        expect((await ok(200, "GET", "/organization/members?limit=100")).total_count).toBe(before);
      });

      it("concurrent creates with one email: exactly one succeeds, the others are 409", async () => {
        const all = await Promise.all(
          Array.from({ length: 6 }, () =>
            call("POST", "/organization/members", { email: "race@example.com" }),
          ),
        );
        expect(all.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      });

      it("bad fields are 400 naming the field", async () => {
        const cases: [unknown, string][] = [
          [{}, "email: is required"],
          [{ email: "not-an-email" }, "email: must be an email address such as ada@example.com"],
          [{ email: "a@b@c" }, "email: must be an email address such as ada@example.com"],
          [{ email: "a b@c.d" }, "email: must be an email address such as ada@example.com"],
          [{ email: "   " }, "email: must not be blank"],
          [{ email: "" }, "email: at least 1 character"],
          [{ email: `${"a".repeat(250)}@x.io` }, "email: at most 254 characters"],
          [{ email: "x@y.z", role: "admin" }, "role: must be one of org:admin, org:member"],
          [{ email: "x@y.z", role: null }, "role: must be string"],
          [{ email: "x@y.z", first_name: "  " }, "first_name: must not be blank (send null for none)"],
          [{ email: "x@y.z", last_name: "a\tb" }, "last_name: must not contain control characters"],
          [{ email: "x@y.z", last_name: "a".repeat(101) }, "last_name: at most 100 characters"],
          [{ email: "x@y.z", first_name: 3 }, "first_name: must be string or null"],
        ];
        for (const [body, message] of cases) {
          const e = await error(400, "POST", "/organization/members", body);
          expect(e.message, JSON.stringify(body)).toBe(message);
        }
        const rows = await env.store.db
          .selectFrom("members")
          .select("email")
          .where("email", "=", "x@y.z")
          .execute();
        expect(rows).toEqual([]);
      });

      it("list pages oldest first with total_count; limit 1..100, offset past the end is []", async () => {
        // A fresh organization so that the counts are exact.
        const other = await createOrganization(env.store, env.t.clock, "Paging");
        const made: Member[] = [];
        for (let i = 0; i < 5; i++) {
          env.t.clock.advance(1000);
          made.push(await newMember({}, other.managementKey));
        }
        const page = (q: string) =>
          ok(200, "GET", `/organization/members${q}`, undefined, other.managementKey);
        expect(await page("")).toEqual({ data: made, total_count: 5 });
        expect(await page("?limit=2")).toEqual({ data: made.slice(0, 2), total_count: 5 });
        expect(await page("?limit=2&offset=2")).toEqual({ data: made.slice(2, 4), total_count: 5 });
        expect(await page("?limit=2&offset=4")).toEqual({ data: made.slice(4), total_count: 5 });
        expect(await page("?offset=5")).toEqual({ data: [], total_count: 5 });
        expect(await page("?offset=")).toEqual({ data: made, total_count: 5 });
        for (const q of ["limit=0", "limit=101", "limit=x", "offset=-1"]) {
          const e = await error(400, "GET", `/organization/members?${q}`, undefined, other.managementKey);
          expect(e.message).toMatch(/^(limit|offset): /);
        }
      });

      it("PATCH sets names and role; null clears a name; {} changes nothing; unknown ids are 404", async () => {
        const m = await newMember({ first_name: "Grace", last_name: "Hopper" });
        const patched = await ok(200, "PATCH", `/organization/members/${m.id}`, {
          first_name: null,
          last_name: " Murray Hopper ",
          role: "org:admin",
        });
        expect(patched.data).toEqual({
          ...m,
          first_name: null,
          last_name: "Murray Hopper",
          role: "org:admin",
        });
        expect((await ok(200, "PATCH", `/organization/members/${m.id}`, {})).data).toEqual(patched.data);
        const listed = (await ok<{ data: Member[] }>(200, "GET", "/organization/members?limit=100")).data;
        expect(listed.find((x) => x.id === m.id)).toEqual(patched.data);
        expect(
          (await error(400, "PATCH", `/organization/members/${m.id}`, { role: "owner" })).message,
        ).toMatch(/^role: /);
        expect(
          (await error(400, "PATCH", `/organization/members/${m.id}`, { email: 3, first_name: "" })).message,
        ).toMatch(/^first_name: /);
        for (const id of ["user_doesnotexist", "nope", "user_%00", "00000000-0000-4000-8000-000000000000"]) {
          expect((await error(404, "PATCH", `/organization/members/${id}`, {})).message).toBe(
            "Member not found",
          );
          expect((await error(404, "DELETE", `/organization/members/${id}`)).message).toBe(
            "Member not found",
          );
        }
      });

      it("an ordinary key is 403 and no key 401", async () => {
        const { key } = await newKey({});
        expect((await call("GET", "/organization/members", undefined, key)).statusCode).toBe(403);
        expect((await call("POST", "/organization/members", { email: "q@q.q" }, key)).statusCode).toBe(403);
        expect(
          (await env.t.call({ method: "GET", url: "/api/v1/organization/members", auth: null })).statusCode,
        ).toBe(401);
      });
    });

    describe("workspace members", () => {
      it("the default workspace lists every member, with stable derived ids and the organization role", async () => {
        const other = await createOrganization(env.store, env.t.clock, "Default ws");
        const a = await newMember({ role: "org:admin" }, other.managementKey);
        env.t.clock.advance(1000);
        const b = await newMember({}, other.managementKey);
        const list = async (ref: string, q = "") =>
          ok<{ data: Membership[]; total_count: number }>(
            200,
            "GET",
            `/workspaces/${ref}/members${q}`,
            undefined,
            other.managementKey,
          );
        const first = await list(other.workspaceId);
        expect(first).toEqual({
          data: [
            {
              id: expect.stringMatching(UUID),
              workspace_id: other.workspaceId,
              user_id: a.id,
              role: "admin",
              created_at: expect.any(String),
            },
            {
              id: expect.stringMatching(UUID),
              workspace_id: other.workspaceId,
              user_id: b.id,
              role: "member",
              created_at: expect.any(String),
            },
          ],
          total_count: 2,
        });
        expect(first.data[0]!.id).not.toBe(first.data[1]!.id);
        // By slug, and again: the same ids.
        expect(await list("default")).toEqual(first);
        expect(await list("default", "?limit=1&offset=1")).toEqual({ data: [first.data[1]], total_count: 2 });
        // Adding to the default workspace changes nothing and answers the standing memberships.
        const added = await ok(
          200,
          "POST",
          "/workspaces/default/members/add",
          { user_ids: [b.id, a.id, b.id] },
          other.managementKey,
        );
        expect(added).toEqual({ added_count: 2, data: [first.data[1], first.data[0]] });
        expect(await memberRows(other.workspaceId)).toEqual([]);
        // Nobody is removed from it.
        const e = await error(
          400,
          "POST",
          "/workspaces/default/members/remove",
          { user_ids: [a.id] },
          other.managementKey,
        );
        expect(e.message).toMatch(/^id: the default workspace holds every member of the organization/);
        expect((await list(other.workspaceId)).total_count).toBe(2);
      });

      it("add: memberships with the organization role; adding again keeps them and counts them", async () => {
        const ws = await newWorkspace();
        const admin = await newMember({ role: "org:admin" });
        const member = await newMember();
        expect(await ok(200, "GET", `/workspaces/${ws.id}/members`)).toEqual({ data: [], total_count: 0 });
        const added = await ok<{ added_count: number; data: Membership[] }>(
          200,
          "POST",
          `/workspaces/${ws.slug}/members/add`,
          {
            user_ids: [admin.id, member.id, admin.id],
          },
        );
        expect(added).toEqual({
          added_count: 2,
          data: [
            {
              id: expect.stringMatching(UUID),
              workspace_id: ws.id,
              user_id: admin.id,
              role: "admin",
              created_at: env.t.clock.now().toISOString(),
            },
            {
              id: expect.stringMatching(UUID),
              workspace_id: ws.id,
              user_id: member.id,
              role: "member",
              created_at: env.t.clock.now().toISOString(),
            },
          ],
        });
        // One add shares one created_at; the list orders such memberships by id (stable pages).
        const byId = [...added.data].sort((x, y) => (x.id < y.id ? -1 : 1));
        expect(await ok(200, "GET", `/workspaces/${ws.id}/members`)).toEqual({ data: byId, total_count: 2 });
        env.t.clock.advance(60_000);
        const again = await ok(200, "POST", `/workspaces/${ws.id}/members/add`, { user_ids: [member.id] });
        expect(again).toEqual({ added_count: 1, data: [added.data[1]] });
        expect(await memberRows(ws.id)).toHaveLength(2);
      });

      it("a member's new organization role reaches every workspace it belongs to", async () => {
        const ws = await newWorkspace();
        const m = await newMember();
        await ok(200, "POST", `/workspaces/${ws.id}/members/add`, { user_ids: [m.id] });
        await ok(200, "PATCH", `/organization/members/${m.id}`, { role: "org:admin" });
        expect((await ok(200, "GET", `/workspaces/${ws.id}/members`)).data[0]).toMatchObject({
          user_id: m.id,
          role: "admin",
        });
        expect(
          (await ok(200, "GET", `/workspaces/default/members?limit=100`)).data.find(
            (x: Membership) => x.user_id === m.id,
          ),
        ).toMatchObject({ role: "admin" });
      });

      it("unknown user ids are one 400 naming them all, and nothing is added", async () => {
        const ws = await newWorkspace();
        const m = await newMember();
        const e = await error(400, "POST", `/workspaces/${ws.id}/members/add`, {
          user_ids: [m.id, "user_nobody", "bob@example.com", "user_nobody"],
        });
        expect(e.message).toBe(
          'user_ids: "user_nobody", "bob@example.com" are not members of this organization',
        );
        expect(e.metadata).toEqual({ unknown_user_ids: ["user_nobody", "bob@example.com"] });
        expect(await memberRows(ws.id)).toEqual([]);
        const one = await error(400, "POST", `/workspaces/${ws.id}/members/remove`, { user_ids: ["user_x"] });
        expect(one.message).toBe('user_ids: "user_x" is not a member of this organization');
      });

      it("bad bodies and unknown workspaces", async () => {
        const ws = await newWorkspace();
        for (const path of ["add", "remove"]) {
          for (const [body, message] of [
            [{}, "user_ids: is required"],
            [{ user_ids: [] }, "user_ids: at least 1 item"],
            [{ user_ids: Array.from({ length: 101 }, (_, i) => `user_${i}`) }, "user_ids: at most 100 items"],
            [{ user_ids: [""] }, "user_ids[0]: at least 1 character"],
            [{ user_ids: "user_a" }, "user_ids: must be array"],
            [{ user_ids: ["user_a", 3] }, "user_ids[1]: must be string"],
          ] as const) {
            expect((await error(400, "POST", `/workspaces/${ws.id}/members/${path}`, body)).message).toBe(
              message,
            );
          }
          const m = await newMember();
          expect(
            (await error(404, "POST", `/workspaces/nope/members/${path}`, { user_ids: [m.id] })).message,
          ).toBe("Workspace not found");
        }
        expect(
          (await error(404, "GET", "/workspaces/00000000-0000-4000-8000-000000000000/members")).message,
        ).toBe("Workspace not found");
      });

      it("remove: counts the memberships that existed; refused while the member has active keys in that workspace", async () => {
        const ws = await newWorkspace();
        const elsewhere = await newWorkspace();
        const [holder, free, outsider] = [await newMember(), await newMember(), await newMember()];
        await ok(200, "POST", `/workspaces/${ws.id}/members/add`, { user_ids: [holder.id, free.id] });
        const key = await newKey({ workspace_id: ws.id, creator_user_id: holder.id });
        // A key elsewhere does not hold the member here; an expired one holds nobody.
        await newKey({ workspace_id: elsewhere.id, creator_user_id: free.id });
        await newKey({ workspace_id: ws.id, creator_user_id: free.id, expires_at: "2026-11-18T12:10:00Z" });
        env.t.clock.advance(20 * 60_000);

        const e = await error(400, "POST", `/workspaces/${ws.id}/members/remove`, {
          user_ids: [free.id, holder.id],
        });
        expect(e.message).toBe(
          `user_ids: "${holder.id}" has active API keys in this workspace; delete them (or let them expire) before removing the member`,
        );
        expect(e.metadata).toEqual({ user_ids_with_active_keys: [holder.id] });
        expect(await memberRows(ws.id)).toHaveLength(2);

        // A disabled key still holds the member (it can be enabled again).
        await ok(200, "PATCH", `/keys/${key.data.hash}`, { disabled: true });
        await error(400, "POST", `/workspaces/${ws.id}/members/remove`, { user_ids: [holder.id] });

        expect(
          await ok(200, "POST", `/workspaces/${ws.id}/members/remove`, { user_ids: [free.id, outsider.id] }),
        ).toEqual({
          removed_count: 1,
        });
        await ok(200, "DELETE", `/keys/${key.data.hash}`);
        expect(
          await ok(200, "POST", `/workspaces/${ws.slug}/members/remove`, { user_ids: [holder.id] }),
        ).toEqual({
          removed_count: 1,
        });
        expect(await ok(200, "GET", `/workspaces/${ws.id}/members`)).toEqual({ data: [], total_count: 0 });
      });

      it("deleting a workspace drops its memberships", async () => {
        const ws = await newWorkspace();
        await ok(200, "POST", `/workspaces/${ws.id}/members/add`, { user_ids: [(await newMember()).id] });
        await ok(200, "DELETE", `/workspaces/${ws.id}`);
        expect(await memberRows(ws.id)).toEqual([]);
      });
    });

    describe("deleting a member", () => {
      it("is refused while the member has active keys anywhere in the organization", async () => {
        const ws = await newWorkspace();
        const m = await newMember();
        const key = await newKey({ workspace_id: ws.id, creator_user_id: m.id });
        const e = await error(400, "DELETE", `/organization/members/${m.id}`);
        expect(e.message).toBe(
          `id: member ${m.id} has 1 active API key (creator_user_id); delete it or let it expire before removing the member`,
        );
        expect(e.metadata).toEqual({ active_key_count: 1 });
        await ok(200, "DELETE", `/keys/${key.data.hash}`);
        expect(await ok(200, "DELETE", `/organization/members/${m.id}`)).toEqual({ deleted: true });
      });

      it("drops its workspace memberships and guardrail assignment, and the policy cache forgets it", async () => {
        const ws = await newWorkspace();
        const m = await newMember();
        const keep = await newMember();
        await ok(200, "POST", `/workspaces/${ws.id}/members/add`, { user_ids: [m.id, keep.id] });
        const at = env.t.clock.now().toISOString();
        const org = env.t.organizationId;
        await env.store.db
          .insertInto("guardrails")
          .values({
            id: "00000000-0000-4000-8000-0000000000aa",
            organization_id: org,
            workspace_id: null,
            is_default: 0,
            name: "g",
            description: null,
            limit_nano: null,
            reset_interval: null,
            include_byok_in_budgets: 0,
            rules: "{}",
            created_at: at,
            updated_at: at,
          })
          .execute();
        await env.store.db
          .insertInto("guardrail_member_assignments")
          .values(
            [m, keep].map((x, i) => ({
              id: `00000000-0000-4000-8000-00000000000${i}`,
              organization_id: org,
              guardrail_id: "00000000-0000-4000-8000-0000000000aa",
              user_id: x.id,
              assigned_by: null,
              created_at: at,
            })),
          )
          .execute();
        env.t.ctx.policy.guardrailsChanged(org);
        expect((await env.t.ctx.policy.guardrails(org)).memberAssignments.has(m.id)).toBe(true);

        expect(await ok(200, "DELETE", `/organization/members/${m.id}`)).toEqual({ deleted: true });
        const cached = await env.t.ctx.policy.guardrails(org);
        expect(cached.memberAssignments.has(m.id)).toBe(false);
        expect(cached.memberAssignments.has(keep.id)).toBe(true);
        expect((await memberRows(ws.id)).map((r) => r.user_id)).toEqual([keep.id]);
        const listed = (await ok<{ data: Member[] }>(200, "GET", "/organization/members?limit=100")).data;
        expect(listed.map((x) => x.id)).not.toContain(m.id);
        expect((await error(404, "DELETE", `/organization/members/${m.id}`)).message).toBe(
          "Member not found",
        );
        // The email is free again.
        expect((await newMember({ email: m.email })).email).toBe(m.email);
      });
    });

    describe("a key's creator_user_id names its member", () => {
      it("without members any value is accepted, as before; with members it must name one (400 otherwise)", async () => {
        const other = await createOrganization(env.store, env.t.clock, "Creators");
        const create = (body: Record<string, unknown>) =>
          call("POST", "/keys", { name: "k", ...body }, other.managementKey);
        expect((await create({ creator_user_id: "user_from_elsewhere" })).statusCode).toBe(201);
        const m = await newMember({}, other.managementKey);
        const bad = await create({ creator_user_id: "user_from_elsewhere" });
        expect(bad.statusCode).toBe(400);
        expect(bad.json().error.message).toBe(
          'creator_user_id: "user_from_elsewhere" is not a member of this organization (see GET /api/v1/organization/members)',
        );
        const mine = await create({ creator_user_id: m.id });
        expect(mine.statusCode, mine.body).toBe(201);
        expect(mine.json().data.creator_user_id).toBe(m.id);
        expect((await create({ creator_user_id: null })).statusCode).toBe(201);
        expect((await create({})).statusCode).toBe(201);
        // Another organization's member is not one of this organization's.
        const foreign = await newMember();
        expect((await create({ creator_user_id: foreign.id })).statusCode).toBe(400);
      });
    });

    describe("organizations are isolated", () => {
      it("one organization never sees or changes another's members or memberships", async () => {
        const b = await createOrganization(env.store, env.t.clock, "Isolated");
        const mine = await newMember({ email: "shared@example.com" });
        const theirs = await newMember({ email: "shared@example.com" }, b.managementKey);
        expect(theirs.id).not.toBe(mine.id);
        const ws = await newWorkspace();
        await ok(200, "POST", `/workspaces/${ws.id}/members/add`, { user_ids: [mine.id] });

        const listB = await ok<{ data: Member[] }>(
          200,
          "GET",
          "/organization/members?limit=100",
          undefined,
          b.managementKey,
        );
        expect(listB.data.map((x) => x.id)).not.toContain(mine.id);
        expect(listB.data.map((x) => x.id)).toContain(theirs.id);
        expect(
          (
            await ok<{ data: Membership[] }>(
              200,
              "GET",
              "/workspaces/default/members?limit=100",
              undefined,
              b.managementKey,
            )
          ).data.map((x) => x.user_id),
        ).not.toContain(mine.id);

        await error(404, "PATCH", `/organization/members/${mine.id}`, { role: "org:admin" }, b.managementKey);
        await error(404, "DELETE", `/organization/members/${mine.id}`, undefined, b.managementKey);
        await error(404, "GET", `/workspaces/${ws.id}/members`, undefined, b.managementKey);
        await error(
          404,
          "POST",
          `/workspaces/${ws.id}/members/remove`,
          { user_ids: [mine.id] },
          b.managementKey,
        );
        await error(
          400,
          "POST",
          `/workspaces/${b.workspaceId}/members/add`,
          { user_ids: [mine.id] },
          b.managementKey,
        );
        const wsB = await newWorkspace(b.managementKey);
        await error(
          400,
          "POST",
          `/workspaces/${wsB.id}/members/add`,
          { user_ids: [mine.id] },
          b.managementKey,
        );
        expect(await memberRows(wsB.id)).toEqual([]);

        const after = (await ok<{ data: Member[] }>(200, "GET", "/organization/members?limit=100")).data;
        expect(after.find((x) => x.id === mine.id)).toEqual(mine);
        expect(
          (await ok(200, "GET", `/workspaces/${ws.id}/members`)).data.map((x: Membership) => x.user_id),
        ).toEqual([mine.id]);
      });
    });
  });
}
