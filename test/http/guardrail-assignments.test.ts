import { describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { hashKey } from "../../src/lib/ids.js";
import { useAppOnStore } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";
import { G, newKey, newMember, ok, refused } from "./guardrails-helpers.js";

/**
 * Guardrail assignments on SQLite and PostgreSQL (docs/guardrails.md "Assignments"): a key or
 * member holds one guardrail and assigning moves it; the counts say what changed; lists page;
 * deleting a key or a guardrail takes its assignments along; the policy cache sees every change on
 * the instance that made it; another organization sees and changes nothing.
 */
for (const factory of STORE_FACTORIES) {
  describe.skipIf(factory.skip)(`guardrail assignments (${factory.name})`, () => {
    const env = useAppOnStore(factory);
    const create = async (name: string) => (await ok(env.t, "POST", G, { name })).data.id as string;
    const keysOf = async (url: string) =>
      ((await ok(env.t, "GET", url)).data as { key_hash: string }[]).map((a) => a.key_hash);

    it("assigning moves a key between guardrails; the counts say what changed", async () => {
      const { t } = env;
      const [g1, g2] = [await create("one"), await create("two")];
      const [k1, k2, k3] = [await newKey(t, "k1"), await newKey(t, "k2"), await newKey(t, "k3")];
      const assign = (g: string, hashes: string[]) =>
        ok(t, "POST", `${G}/${g}/assignments/keys`, { key_hashes: hashes });
      const unassign = (g: string, hashes: string[]) =>
        ok(t, "POST", `${G}/${g}/assignments/keys/remove`, { key_hashes: hashes });

      expect(await assign(g1, [k1, k2, k1.toUpperCase()])).toEqual({ assigned_count: 2 });
      expect(await assign(g1, [k1])).toEqual({ assigned_count: 0 }); // already there
      t.clock.advance(1_000);
      const at = t.clock.now().toISOString();
      expect(await assign(g2, [k1, k3])).toEqual({ assigned_count: 2 }); // k1 moved, k3 new
      expect(await keysOf(`${G}/${g1}/assignments/keys`)).toEqual([k2]);
      // Assigned at the same instant: listed by id then, so compare as sets.
      expect((await keysOf(`${G}/${g2}/assignments/keys`)).sort()).toEqual([k1, k3].sort());

      const all = await ok(t, "GET", `${G}/assignments/keys`);
      expect(all.total_count).toBe(3);
      const byHash = new Map(all.data.map((a: { key_hash: string }) => [a.key_hash, a]));
      expect(byHash.get(k3)).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        guardrail_id: g2,
        key_hash: k3,
        key_name: "k3",
        key_label: expect.stringMatching(/^sk-gh-v1-[0-9a-f]{3}\.\.\.[0-9a-f]{4}$/),
        assigned_by: null,
        created_at: at,
      });

      expect(await unassign(g2, [k1, k2, "f".repeat(64)])).toEqual({ unassigned_count: 1 }); // k2 is g1's
      expect(await keysOf(`${G}/${g2}/assignments/keys`)).toEqual([k3]);
      expect(await keysOf(`${G}/${g1}/assignments/keys`)).toEqual([k2]);

      const policy = await t.ctx.policy.guardrails(t.organizationId);
      expect(Object.fromEntries(policy.keyAssignments)).toEqual({ [k2]: g1, [k3]: g2 });
      // The cache is told on this instance: an assignment is seen by the next read.
      await assign(g1, [k1]);
      expect((await t.ctx.policy.guardrails(t.organizationId)).keyAssignments.get(k1)).toBe(g1);

      // Deleting a guardrail deletes its assignments; the others stay.
      await ok(t, "DELETE", `${G}/${g1}`);
      expect(await keysOf(`${G}/assignments/keys`)).toEqual([k3]);
      expect(Object.fromEntries((await t.ctx.policy.guardrails(t.organizationId)).keyAssignments)).toEqual({
        [k3]: g2,
      });
      // Deleting a key deletes its assignment.
      await ok(t, "DELETE", `/api/v1/keys/${k3}`);
      expect((await ok(t, "GET", `${G}/assignments/keys`)).total_count).toBe(0);
      expect((await t.ctx.policy.guardrails(t.organizationId)).keyAssignments.size).toBe(0);
      await ok(t, "DELETE", `${G}/${g2}`);
    });

    it("refuses unknown, malformed, deleted and management key hashes, naming the index; nothing assigned", async () => {
      const { t } = env;
      const g = await create("strict");
      const live = await newKey(t, "live");
      const deleted = await newKey(t, "deleted");
      await ok(t, "DELETE", `/api/v1/keys/${deleted}`);
      const url = `${G}/${g}/assignments/keys`;
      await refused(
        t,
        "POST",
        url,
        { key_hashes: [live, "0".repeat(64)] },
        "key_hashes[1]: no API key with this hash in the organization",
      );
      await refused(
        t,
        "POST",
        url,
        { key_hashes: [live, deleted] },
        "key_hashes[1]: no API key with this hash in the organization",
      );
      await refused(
        t,
        "POST",
        url,
        { key_hashes: ["abc"] },
        "key_hashes[0]: must be 64 hexadecimal characters (a key's hash)",
      );
      await refused(
        t,
        "POST",
        url,
        { key_hashes: [live, hashKey(t.key)] },
        "key_hashes[1]: is a management key, which makes no model requests; assign ordinary keys",
      );
      await refused(t, "POST", url, { key_hashes: [] }, "key_hashes: at least 1 item");
      await refused(t, "POST", url, {}, "key_hashes: is required");
      await refused(
        t,
        "POST",
        `${url}/remove`,
        { key_hashes: ["xyz"] },
        /^key_hashes\[0\]: must be 64 hexadecimal/,
      );
      expect((await ok(t, "GET", url)).total_count).toBe(0);
      await ok(t, "DELETE", `${G}/${g}`);
    });

    it("pages the lists with offset and limit, and total_count counts them all", async () => {
      const { t } = env;
      const g = await create("paged");
      const hashes: string[] = [];
      for (let i = 0; i < 7; i++) {
        hashes.push(await newKey(t, `p${i}`));
        t.clock.advance(1_000);
        await ok(t, "POST", `${G}/${g}/assignments/keys`, { key_hashes: [hashes[i]] });
      }
      const page = async (url: string) =>
        (await ok(t, "GET", url)) as { data: { key_hash: string }[]; total_count: number };
      const p1 = await page(`${G}/${g}/assignments/keys?limit=3`);
      const p2 = await page(`${G}/${g}/assignments/keys?offset=3&limit=3`);
      const p3 = await page(`${G}/${g}/assignments/keys?offset=6&limit=3`);
      const p4 = await page(`${G}/${g}/assignments/keys?offset=9&limit=3`);
      expect([p1, p2, p3, p4].map((p) => p.total_count)).toEqual([7, 7, 7, 7]);
      expect([...p1.data, ...p2.data, ...p3.data].map((a: { key_hash: string }) => a.key_hash)).toEqual(
        hashes,
      );
      expect(p4.data).toEqual([]);
      const all = await page(`${G}/assignments/keys?offset=2&limit=2`);
      expect(all.data.map((a: { key_hash: string }) => a.key_hash)).toEqual(hashes.slice(2, 4));
      const bad = await t.call({ method: "GET", url: `${G}/${g}/assignments/keys?limit=0` });
      expect(bad.statusCode).toBe(400);
      await ok(t, "DELETE", `${G}/${g}`);
    });

    it("members: assign, move, count, list, unassign; an unknown member is 400", async () => {
      const { t } = env;
      const [g1, g2] = [await create("m1"), await create("m2")];
      const [a, b, c] = [
        await newMember(t, "a@example.com"),
        await newMember(t, "b@example.com"),
        await newMember(t, "c@example.com"),
      ];
      const assign = (g: string, ids: string[]) =>
        ok(t, "POST", `${G}/${g}/assignments/members`, { member_user_ids: ids });
      expect(await assign(g1, [a, b, a])).toEqual({ assigned_count: 2 });
      expect(await assign(g1, [b])).toEqual({ assigned_count: 0 });
      t.clock.advance(1_000);
      const at = t.clock.now().toISOString();
      expect(await assign(g2, [b, c])).toEqual({ assigned_count: 2 });
      await refused(
        t,
        "POST",
        `${G}/${g1}/assignments/members`,
        { member_user_ids: [a, "user_nobody"] },
        "member_user_ids[1]: no member with this id in the organization",
      );
      const listed = await ok(t, "GET", `${G}/${g2}/assignments/members`);
      // One order on both sides (code units: localeCompare and sort() disagree on case).
      listed.data.sort((x: { user_id: string }, y: { user_id: string }) =>
        x.user_id < y.user_id ? -1 : x.user_id > y.user_id ? 1 : 0,
      );
      expect(listed).toEqual({
        data: [b, c].sort().map((u) => ({
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          guardrail_id: g2,
          user_id: u,
          organization_id: t.organizationId,
          assigned_by: null,
          created_at: at,
        })),
        total_count: 2,
      });
      expect((await ok(t, "GET", `${G}/assignments/members`)).total_count).toBe(3);
      expect(Object.fromEntries((await t.ctx.policy.guardrails(t.organizationId)).memberAssignments)).toEqual(
        {
          [a]: g1,
          [b]: g2,
          [c]: g2,
        },
      );
      expect(
        await ok(t, "POST", `${G}/${g2}/assignments/members/remove`, { member_user_ids: [a, b, "user_x"] }),
      ).toEqual({ unassigned_count: 1 });
      await ok(t, "DELETE", `${G}/${g2}`);
      expect(
        (await ok(t, "GET", `${G}/assignments/members`)).data.map((m: { user_id: string }) => m.user_id),
      ).toEqual([a]);
      await ok(t, "DELETE", `${G}/${g1}`);
      expect((await ok(t, "GET", `${G}/assignments/members`)).total_count).toBe(0);
    });

    it("removing a member through the members API removes its assignment, and the cache sees it", async () => {
      const { t } = env;
      const g = await create("member-removed");
      const m = await newMember(t, "leaving@example.com");
      await ok(t, "POST", `${G}/${g}/assignments/members`, { member_user_ids: [m] });
      expect((await t.ctx.policy.guardrails(t.organizationId)).memberAssignments.get(m)).toBe(g);
      await ok(t, "DELETE", `/api/v1/organization/members/${m}`);
      expect((await ok(t, "GET", `${G}/${g}/assignments/members`)).total_count).toBe(0);
      expect((await t.ctx.policy.guardrails(t.organizationId)).memberAssignments.has(m)).toBe(false);
      await refused(
        t,
        "POST",
        `${G}/${g}/assignments/members`,
        { member_user_ids: [m] },
        "member_user_ids[0]: no member with this id in the organization",
      );
      await ok(t, "DELETE", `${G}/${g}`);
    });

    it("assigned_by names the member who created the management key that assigned", async () => {
      const { t } = env;
      // A management key with a creator: the operator's key is the only one the API has, so its row
      // is given one here, as a key minted for a member would carry it.
      const member = await newMember(t, "admin@example.com");
      await t.ctx.store.db
        .updateTable("api_keys")
        .set({ creator_user_id: member })
        .where("hash", "=", hashKey(t.key))
        .execute();
      const g = await create("attributed");
      const k = await newKey(t, "attributed-key");
      await ok(t, "POST", `${G}/${g}/assignments/keys`, { key_hashes: [k] });
      await ok(t, "POST", `${G}/${g}/assignments/members`, { member_user_ids: [member] });
      expect((await ok(t, "GET", `${G}/${g}/assignments/keys`)).data[0].assigned_by).toBe(member);
      expect((await ok(t, "GET", `${G}/${g}/assignments/members`)).data[0].assigned_by).toBe(member);
      await t.ctx.store.db
        .updateTable("api_keys")
        .set({ creator_user_id: null })
        .where("hash", "=", hashKey(t.key))
        .execute();
      await ok(t, "DELETE", `${G}/${g}`);
    });

    it("another organization's guardrails answer as unknown ones, and its writes change nothing", async () => {
      const { t } = env;
      const g = (await ok(t, "POST", G, { name: "mine", allowed_models: ["mock/echo"] })).data;
      const k = await newKey(t, "mine");
      await ok(t, "POST", `${G}/${g.id}/assignments/keys`, { key_hashes: [k] });
      // Whatever else this organization holds (another test's guardrails), compared before and after.
      const before = (await ok(t, "GET", G)).data;
      const dflt = (await ok(t, "GET", `/api/v1/workspaces/${t.workspaceId}`)).data.default_guardrail_id;
      const other = await createOrganization(t.ctx.store, t.clock, "Other organization");
      const theirs = (
        await t.call({
          method: "POST",
          url: G,
          payload: { name: "theirs" },
          auth: other.managementKey,
        })
      ).json().data.id as string;
      const unknown = "00000000-0000-4000-8000-000000000000";
      const as = (method: "GET" | "PATCH" | "DELETE" | "POST", url: string, payload?: object) =>
        t.call({ method, url, auth: other.managementKey, ...(payload ? { payload } : {}) });
      for (const id of [g.id, dflt]) {
        for (const [method, suffix, payload] of [
          ["GET", "", undefined],
          ["PATCH", "", { name: "taken over", allowed_models: null }],
          ["DELETE", "", undefined],
          ["GET", "/assignments/keys", undefined],
          ["POST", "/assignments/keys/remove", { key_hashes: [k] }],
          ["POST", "/assignments/members/remove", { member_user_ids: ["user_x"] }],
        ] as const) {
          const mine = await as(method, `${G}/${id}${suffix}`, payload);
          const none = await as(method, `${G}/${unknown}${suffix}`, payload);
          expect(mine.statusCode, `${method} ${suffix}`).toBe(404);
          expect(mine.body).toBe(none.body);
        }
      }
      // Their own guardrail cannot take this organization's key.
      const r = await as("POST", `${G}/${theirs}/assignments/keys`, { key_hashes: [k] });
      expect(r.statusCode).toBe(400);
      expect(r.json().error.message).toBe("key_hashes[0]: no API key with this hash in the organization");
      expect(await (await as("GET", G)).json()).toMatchObject({ total_count: 1 });
      expect(await (await as("GET", `${G}/assignments/keys`)).json()).toEqual({ data: [], total_count: 0 });
      // Nothing of this organization's changed.
      expect((await ok(t, "GET", `${G}/${g.id}`)).data).toEqual(g);
      expect(await keysOf(`${G}/${g.id}/assignments/keys`)).toEqual([k]);
      expect((await ok(t, "GET", G)).data).toEqual(before);
      expect(before.map((x: { id: string }) => x.id)).toContain(g.id);
      await ok(t, "DELETE", `${G}/${g.id}`);
    });
  });
}
