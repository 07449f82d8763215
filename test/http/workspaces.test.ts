import { Workspace$inboundSchema } from "@openrouter/sdk/models";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { insertDestination } from "../../src/domain/destinations/destination-repo.js";
import { insertKey } from "../../src/domain/keys/key-repo.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { requireDefaultWorkspace } from "../../src/domain/workspaces/resolve-workspace.js";
import { defaultGuardrailId } from "../../src/domain/workspaces/workspace-record.js";
import { hashKey, keyLabel, newId, newKeyString } from "../../src/lib/ids.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { destinationRow } from "../helpers/destination-configs.js";

/** Adds a key straight through the repository (the keys routes are another resource's). */
async function addKey(
  t: TestApp,
  workspaceId: string,
  opts: {
    management?: boolean;
    disabled?: boolean;
    creatorUserId?: string | null;
    organizationId?: string;
  } = {},
): Promise<{ key: string; hash: string }> {
  const key = newKeyString();
  await insertKey(t.ctx.store.db, {
    hash: hashKey(key),
    label: keyLabel(key),
    organizationId: opts.organizationId ?? t.organizationId,
    workspaceId,
    name: "test key",
    isManagement: opts.management ?? false,
    limitNano: null,
    limitReset: null,
    includeByokInLimit: false,
    creatorUserId: opts.creatorUserId ?? null,
    externalUser: null,
    externalKeyHash: null,
    expiresAt: null,
    now: t.clock.now(),
  });
  if (opts.disabled) {
    await t.ctx.store.db
      .updateTable("api_keys")
      .set({ disabled: 1 })
      .where("hash", "=", hashKey(key))
      .execute();
  }
  return { key, hash: hashKey(key) };
}

const create = (t: TestApp, payload: Record<string, unknown>, auth?: string | null) =>
  t.call({ method: "POST", url: "/api/v1/workspaces", payload, ...(auth === undefined ? {} : { auth }) });

const countWorkspaces = async (t: TestApp) =>
  Number(
    (
      await t.ctx.store.db
        .selectFrom("workspaces")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe("workspaces", () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeTestApp();
  });
  afterEach(() => t.close());

  describe("POST /workspaces", () => {
    it("creates a workspace with defaults, 201, and a record the SDK parses", async () => {
      const res = await create(t, { name: "Research", slug: "research" });
      expect(res.statusCode).toBe(201);
      const { data } = res.json();
      expect(data).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: "Research",
        slug: "research",
        description: null,
        created_at: "2026-11-18T12:00:00.000Z",
        updated_at: "2026-11-18T12:00:00.000Z",
        created_by: null,
        default_guardrail_id: defaultGuardrailId(data.id),
        default_text_model: null,
        default_image_model: null,
        default_provider_sort: null,
        disabled_server_tools: null,
        include_byok_in_budgets: false,
        io_logging_api_key_ids: null,
        io_logging_sampling_rate: 1,
        is_data_discount_logging_enabled: false,
        is_observability_broadcast_enabled: false,
        is_observability_io_logging_enabled: false,
      });
      expect(() => Workspace$inboundSchema.parse(data)).not.toThrow();
    });

    it("stores every setting", async () => {
      const payload = {
        name: "Prod",
        slug: "prod-eu-1",
        description: "Production traffic",
        default_text_model: "openai/gpt-4o",
        default_image_model: "google/imagen-4",
        default_provider_sort: "latency",
        disabled_server_tools: ["openrouter:bash", "openrouter:web_search", "openrouter:bash"],
        io_logging_api_key_ids: [3, 1, 3],
        io_logging_sampling_rate: 0.25,
        is_data_discount_logging_enabled: true,
        is_observability_broadcast_enabled: true,
        is_observability_io_logging_enabled: true,
      };
      const res = await create(t, payload);
      expect(res.statusCode).toBe(201);
      const { data } = res.json();
      expect(data).toMatchObject({
        ...payload,
        disabled_server_tools: ["openrouter:bash", "openrouter:web_search"],
        io_logging_api_key_ids: [3, 1],
      });
      expect(() => Workspace$inboundSchema.parse(data)).not.toThrow();
      const again = await t.call({ method: "GET", url: `/api/v1/workspaces/${data.id}` });
      expect(again.json().data).toEqual(data);
    });

    it("sets created_by to the creator user of the calling management key", async () => {
      const mgmt = await addKey(t, t.workspaceId, { management: true, creatorUserId: "user_2abc" });
      const res = await create(t, { name: "A", slug: "a" }, mgmt.key);
      expect(res.statusCode).toBe(201);
      expect(res.json().data.created_by).toBe("user_2abc");
    });

    it("derives default_guardrail_id deterministically from the workspace id", async () => {
      const a = (await create(t, { name: "A", slug: "a" })).json().data;
      const b = (await create(t, { name: "B", slug: "b" })).json().data;
      expect(a.default_guardrail_id).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      expect(a.default_guardrail_id).not.toBe(b.default_guardrail_id);
      expect(a.default_guardrail_id).not.toBe(a.id);
      expect(defaultGuardrailId(a.id)).toBe(a.default_guardrail_id);
      const read = (await t.call({ method: "GET", url: `/api/v1/workspaces/${a.id}` })).json().data;
      expect(read.default_guardrail_id).toBe(a.default_guardrail_id);
    });

    it("refuses a slug already used by a live workspace with 409, and frees it on delete", async () => {
      expect((await create(t, { name: "A", slug: "team" })).statusCode).toBe(201);
      const dup = await create(t, { name: "B", slug: "team" });
      expect(dup.statusCode).toBe(409);
      expect(dup.json()).toEqual({
        error: { code: 409, message: "slug: a workspace with slug 'team' already exists", metadata: null },
      });
      expect((await create(t, { name: "C", slug: "default" })).statusCode).toBe(409);
      expect((await t.call({ method: "DELETE", url: "/api/v1/workspaces/team" })).statusCode).toBe(200);
      expect((await create(t, { name: "D", slug: "team" })).statusCode).toBe(201);
    });

    it("allows the same slug in another organization", async () => {
      await createOrganization(t.ctx.store, t.clock, "Other");
      expect((await create(t, { name: "A", slug: "shared" })).statusCode).toBe(201);
      const other = await createOrganization(t.ctx.store, t.clock, "Other 2");
      const res = await create(t, { name: "A", slug: "shared" }, other.managementKey);
      expect(res.statusCode).toBe(201);
    });

    it.each([
      [{ slug: "x" }, "name: is required"],
      [{ name: "x" }, "slug: is required"],
      [{ name: "", slug: "x" }, "name: at least 1 character"],
      [{ name: "x".repeat(101), slug: "x" }, "name: at most 100 characters"],
      [{ name: "   ", slug: "x" }, "name: must not be blank"],
      [{ name: 12, slug: "x" }, "name: must be string"],
      [{ name: "x", slug: "" }, "slug: at least 1 character"],
      [{ name: "x", slug: "a".repeat(51) }, "slug: at most 50 characters"],
      [{ name: "x", slug: "Upper" }, "slug: must match ^[a-z0-9]+(?:-[a-z0-9]+)*$"],
      [{ name: "x", slug: "a--b" }, "slug: must match ^[a-z0-9]+(?:-[a-z0-9]+)*$"],
      [{ name: "x", slug: "-a" }, "slug: must match ^[a-z0-9]+(?:-[a-z0-9]+)*$"],
      [{ name: "x", slug: "a_b" }, "slug: must match ^[a-z0-9]+(?:-[a-z0-9]+)*$"],
      [{ name: "x", slug: "x", description: "d".repeat(501) }, "description: at most 500 characters"],
      [{ name: "x", slug: "x", description: 5 }, "description: must be string or null"],
      [{ name: "x", slug: "x", default_text_model: 5 }, "default_text_model: must be string or null"],
      [{ name: "x", slug: "x", default_image_model: "" }, "default_image_model: at least 1 character"],
      [
        { name: "x", slug: "x", default_provider_sort: "cheapest" },
        "default_provider_sort: must be one of price, throughput, latency, exacto",
      ],
      [
        { name: "x", slug: "x", disabled_server_tools: ["openrouter:teleport"] },
        "disabled_server_tools[0]: must be one of",
      ],
      [
        { name: "x", slug: "x", disabled_server_tools: "openrouter:bash" },
        "disabled_server_tools: must be array or null",
      ],
      [{ name: "x", slug: "x", io_logging_api_key_ids: [1.5] }, "io_logging_api_key_ids[0]: must be integer"],
      [{ name: "x", slug: "x", io_logging_api_key_ids: ["1"] }, "io_logging_api_key_ids[0]: must be integer"],
      [{ name: "x", slug: "x", io_logging_sampling_rate: 0 }, "io_logging_sampling_rate: must be >= 0.0001"],
      [{ name: "x", slug: "x", io_logging_sampling_rate: 1.01 }, "io_logging_sampling_rate: must be <= 1"],
      [{ name: "x", slug: "x", io_logging_sampling_rate: "0.5" }, "io_logging_sampling_rate: must be number"],
      [
        { name: "x", slug: "x", is_data_discount_logging_enabled: 1 },
        "is_data_discount_logging_enabled: must be boolean",
      ],
      [
        { name: "x", slug: "x", is_observability_broadcast_enabled: "true" },
        "is_observability_broadcast_enabled: must be boolean",
      ],
      [
        { name: "x", slug: "x", is_observability_io_logging_enabled: null },
        "is_observability_io_logging_enabled: must be boolean",
      ],
    ])("refuses %j with 400 and creates nothing", async (payload, message) => {
      const before = await countWorkspaces(t);
      const res = await create(t, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe(400);
      expect(res.json().error.message).toContain(message);
      expect(await countWorkspaces(t)).toBe(before);
    });

    it("accepts the boundary values", async () => {
      const res = await create(t, {
        name: "n".repeat(100),
        slug: "s".repeat(50),
        description: "d".repeat(500),
        io_logging_sampling_rate: 0.0001,
        disabled_server_tools: [],
        io_logging_api_key_ids: [],
      });
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toMatchObject({ disabled_server_tools: null, io_logging_api_key_ids: [] });
    });

    it("ignores unknown fields", async () => {
      const res = await create(t, {
        name: "x",
        slug: "x",
        id: "00000000-0000-4000-8000-000000000000",
        extra: 1,
      });
      expect(res.statusCode).toBe(201);
      expect(res.json().data.id).not.toBe("00000000-0000-4000-8000-000000000000");
      expect(res.json().data).not.toHaveProperty("extra");
    });
  });

  describe("GET /workspaces", () => {
    it("lists live workspaces oldest first with total_count and pagination", async () => {
      for (const s of ["w1", "w2", "w3"]) {
        t.clock.advance(1000);
        await create(t, { name: s, slug: s });
      }
      const all = await t.call({ method: "GET", url: "/api/v1/workspaces" });
      expect(all.statusCode).toBe(200);
      expect(all.json().total_count).toBe(4);
      expect(all.json().data.map((w: { slug: string }) => w.slug)).toEqual(["default", "w1", "w2", "w3"]);
      for (const w of all.json().data) expect(() => Workspace$inboundSchema.parse(w)).not.toThrow();

      const page = await t.call({ method: "GET", url: "/api/v1/workspaces?offset=1&limit=2" });
      expect(page.json().data.map((w: { slug: string }) => w.slug)).toEqual(["w1", "w2"]);
      expect(page.json().total_count).toBe(4);
      const past = await t.call({ method: "GET", url: "/api/v1/workspaces?offset=10" });
      expect(past.json()).toEqual({ data: [], total_count: 4 });

      await t.call({ method: "DELETE", url: "/api/v1/workspaces/w2" });
      const after = await t.call({ method: "GET", url: "/api/v1/workspaces" });
      expect(after.json().total_count).toBe(3);
      expect(after.json().data.map((w: { slug: string }) => w.slug)).toEqual(["default", "w1", "w3"]);
    });

    it("defaults to 50 per page", async () => {
      for (let i = 0; i < 55; i++) await create(t, { name: `w${i}`, slug: `w${i}` });
      const res = await t.call({ method: "GET", url: "/api/v1/workspaces" });
      expect(res.json().data).toHaveLength(50);
      expect(res.json().total_count).toBe(56);
      const full = await t.call({ method: "GET", url: "/api/v1/workspaces?limit=100" });
      expect(full.json().data).toHaveLength(56);
    });

    it.each([
      ["limit=0", "limit: must be >= 1"],
      ["limit=101", "limit: must be <= 100"],
      ["limit=abc", "limit: must be integer"],
      ["offset=-1", "offset: must be >= 0"],
    ])("refuses %s with 400", async (qs, message) => {
      const res = await t.call({ method: "GET", url: `/api/v1/workspaces?${qs}` });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain(message);
    });

    it("does not list other organizations' workspaces", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      await create(t, { name: "theirs", slug: "theirs" }, other.managementKey);
      const res = await t.call({ method: "GET", url: "/api/v1/workspaces" });
      expect(res.json().total_count).toBe(1);
      expect(res.json().data[0].id).toBe(t.workspaceId);
    });
  });

  describe("GET /workspaces/{id}", () => {
    it("finds a workspace by id (any case) and by slug", async () => {
      const ws = (await create(t, { name: "A", slug: "alpha" })).json().data;
      for (const ref of [ws.id, ws.id.toUpperCase(), "alpha"]) {
        const res = await t.call({ method: "GET", url: `/api/v1/workspaces/${ref}` });
        expect(res.statusCode).toBe(200);
        expect(res.json().data.id).toBe(ws.id);
      }
    });

    it("tries the id before the slug when a slug looks like a UUID", async () => {
      const a = (await create(t, { name: "A", slug: "a" })).json().data;
      const b = (await create(t, { name: "B", slug: a.id })).json().data;
      expect((await t.call({ method: "GET", url: `/api/v1/workspaces/${a.id}` })).json().data.id).toBe(a.id);
      const unused = newId();
      await t.call({ method: "PATCH", url: `/api/v1/workspaces/${b.id}`, payload: { slug: unused } });
      expect((await t.call({ method: "GET", url: `/api/v1/workspaces/${unused}` })).json().data.id).toBe(
        b.id,
      );
    });

    it("answers 404 for unknown, malformed, deleted and other organizations' workspaces", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const theirs = (await create(t, { name: "T", slug: "theirs" }, other.managementKey)).json().data;
      await create(t, { name: "G", slug: "gone" });
      await t.call({ method: "DELETE", url: "/api/v1/workspaces/gone" });
      for (const ref of [
        newId(),
        "no-such-slug",
        "NOT_A_SLUG",
        "%20",
        theirs.id,
        "theirs",
        other.workspaceId,
        "gone",
      ]) {
        const res = await t.call({ method: "GET", url: `/api/v1/workspaces/${ref}` });
        expect(res.statusCode, ref).toBe(404);
        expect(res.json()).toEqual({ error: { code: 404, message: "Workspace not found", metadata: null } });
      }
    });
  });

  describe("PATCH /workspaces/{id}", () => {
    it("changes only the given fields and bumps updated_at", async () => {
      const ws = (
        await create(t, {
          name: "A",
          slug: "a",
          description: "keep",
          disabled_server_tools: ["openrouter:shell"],
        })
      ).json().data;
      t.clock.advance(60_000);
      const res = await t.call({
        method: "PATCH",
        url: "/api/v1/workspaces/a",
        payload: { name: "Renamed", default_provider_sort: "price", disabled_server_tools: [] },
      });
      expect(res.statusCode).toBe(200);
      const data = res.json().data;
      expect(data).toEqual({
        ...ws,
        name: "Renamed",
        default_provider_sort: "price",
        disabled_server_tools: null,
        updated_at: "2026-11-18T12:01:00.000Z",
      });
      expect(() => Workspace$inboundSchema.parse(data)).not.toThrow();
    });

    it("clears nullable fields with null", async () => {
      await create(t, {
        name: "A",
        slug: "a",
        description: "d",
        default_text_model: "m",
        default_provider_sort: "throughput",
        disabled_server_tools: ["openrouter:bash"],
        io_logging_api_key_ids: [1],
      });
      const res = await t.call({
        method: "PATCH",
        url: "/api/v1/workspaces/a",
        payload: {
          description: null,
          default_text_model: null,
          default_provider_sort: null,
          disabled_server_tools: null,
          io_logging_api_key_ids: null,
        },
      });
      expect(res.json().data).toMatchObject({
        description: null,
        default_text_model: null,
        default_provider_sort: null,
        disabled_server_tools: null,
        io_logging_api_key_ids: null,
      });
    });

    it("an empty body changes nothing", async () => {
      const ws = (await create(t, { name: "A", slug: "a" })).json().data;
      t.clock.advance(1000);
      const res = await t.call({ method: "PATCH", url: `/api/v1/workspaces/${ws.id}`, payload: {} });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual(ws);
    });

    it("changes the slug, and refuses a slug in use with 409", async () => {
      await create(t, { name: "A", slug: "a" });
      await create(t, { name: "B", slug: "b" });
      const dup = await t.call({ method: "PATCH", url: "/api/v1/workspaces/a", payload: { slug: "b" } });
      expect(dup.statusCode).toBe(409);
      const same = await t.call({ method: "PATCH", url: "/api/v1/workspaces/a", payload: { slug: "a" } });
      expect(same.statusCode).toBe(200);
      const moved = await t.call({ method: "PATCH", url: "/api/v1/workspaces/a", payload: { slug: "c" } });
      expect(moved.json().data.slug).toBe("c");
      expect((await t.call({ method: "GET", url: "/api/v1/workspaces/a" })).statusCode).toBe(404);
      expect((await t.call({ method: "GET", url: "/api/v1/workspaces/c" })).statusCode).toBe(200);
    });

    it("refuses an invalid field with 400 and applies none of the others", async () => {
      const ws = (await create(t, { name: "A", slug: "a" })).json().data;
      for (const payload of [
        { name: "New", slug: "BAD SLUG" },
        { name: null },
        { slug: null },
        { name: "New", io_logging_sampling_rate: 2 },
        { name: "   " },
        { description: "ok", default_provider_sort: "fastest" },
      ]) {
        const res = await t.call({ method: "PATCH", url: "/api/v1/workspaces/a", payload });
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      }
      expect((await t.call({ method: "GET", url: "/api/v1/workspaces/a" })).json().data).toEqual(ws);
    });

    it("answers 404 for another organization's workspace by id and by slug", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const theirs = (await create(t, { name: "T", slug: "theirs" }, other.managementKey)).json().data;
      for (const ref of [theirs.id, "theirs"]) {
        const res = await t.call({
          method: "PATCH",
          url: `/api/v1/workspaces/${ref}`,
          payload: { name: "x" },
        });
        expect(res.statusCode).toBe(404);
      }
      const read = await t.call({
        method: "GET",
        url: `/api/v1/workspaces/${theirs.id}`,
        auth: other.managementKey,
      });
      expect(read.json().data.name).toBe("T");
    });
  });

  describe("DELETE /workspaces/{id}", () => {
    it("refuses while active keys remain, saying how many", async () => {
      const ws = (await create(t, { name: "A", slug: "a" })).json().data;
      await addKey(t, ws.id);
      await addKey(t, ws.id);
      await addKey(t, ws.id, { disabled: true });
      const res = await t.call({ method: "DELETE", url: "/api/v1/workspaces/a" });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toBe(
        "Workspace has 2 active API keys; disable or delete them before deleting the workspace",
      );
      expect(res.json().error.metadata).toEqual({ active_key_count: 2 });
      expect((await t.call({ method: "GET", url: "/api/v1/workspaces/a" })).statusCode).toBe(200);
    });

    it("soft-deletes the workspace, its remaining keys and destinations, and removes its budgets", async () => {
      const ws = (await create(t, { name: "A", slug: "a" })).json().data;
      const disabled = await addKey(t, ws.id, { disabled: true });
      const survivor = await addKey(t, t.workspaceId);
      await t.call({ method: "PUT", url: "/api/v1/workspaces/a/budgets/daily", payload: { limit_usd: 5 } });
      await t.call({
        method: "PUT",
        url: "/api/v1/workspaces/a/budgets/lifetime",
        payload: { limit_usd: 50 },
      });
      const destId = newId();
      const at = t.clock.now().toISOString();
      await insertDestination(
        t.ctx.store.db,
        destinationRow({
          id: destId,
          organizationId: t.organizationId,
          workspaceId: ws.id,
          type: "langfuse",
          at,
        }),
      );
      // Provider keys (BYOK): the workspace's go with it, another workspace's stay.
      const byok = async (workspace_id: string) => {
        const r = await t.call({
          method: "POST",
          url: "/api/v1/byok",
          payload: { provider: "openai", key: "sk-proj-abcdefghijklmnop", workspace_id },
        });
        expect(r.statusCode, r.body).toBe(201);
        return r.json<{ data: { id: string } }>().data.id;
      };
      const gone = await byok(ws.id);
      const kept = await byok(t.workspaceId);
      t.clock.advance(5000);
      const res = await t.call({ method: "DELETE", url: `/api/v1/workspaces/${ws.id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ deleted: true });
      const listed = (await t.call({ method: "GET", url: "/api/v1/byok" })).json<{
        data: { id: string }[];
      }>();
      expect(listed.data.map((k) => k.id)).toEqual([kept]);
      expect((await t.call({ method: "GET", url: `/api/v1/byok/${gone}` })).statusCode).toBe(404);
      const secrets = await t.ctx.store.db.selectFrom("byok_keys").select("id").execute();
      expect(secrets.map((r) => r.id)).toEqual([kept]);

      const db = t.ctx.store.db;
      const deletedAt = "2026-11-18T12:00:05.000Z";
      const row = await db
        .selectFrom("workspaces")
        .selectAll()
        .where("id", "=", ws.id)
        .executeTakeFirstOrThrow();
      expect(row.deleted_at).toBe(deletedAt);
      const budgets = await db.selectFrom("budgets").selectAll().where("workspace_id", "=", ws.id).execute();
      expect(budgets).toEqual([]);
      const dest = await db
        .selectFrom("destinations")
        .selectAll()
        .where("id", "=", destId)
        .executeTakeFirstOrThrow();
      expect(dest.deleted_at).toBe(deletedAt);
      expect(Number(dest.enabled)).toBe(0);
      const key = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("hash", "=", disabled.hash)
        .executeTakeFirstOrThrow();
      expect(key.deleted_at).toBe(deletedAt);
      const other = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("hash", "=", survivor.hash)
        .executeTakeFirstOrThrow();
      expect(other.deleted_at).toBeNull();

      expect((await t.call({ method: "GET", url: `/api/v1/workspaces/${ws.id}` })).statusCode).toBe(404);
      expect((await t.call({ method: "DELETE", url: `/api/v1/workspaces/${ws.id}` })).statusCode).toBe(404);
      expect((await t.call({ method: "GET", url: "/api/v1/workspaces/a/budgets" })).statusCode).toBe(404);
    });

    it("needs confirm_default_workspace_deletion=true for the default workspace", async () => {
      // The default workspace holds the organization's management key: move a new one elsewhere first.
      const ws = (await create(t, { name: "Ops", slug: "ops" })).json().data;
      const mgmt = await addKey(t, ws.id, { management: true });
      await t.ctx.store.db
        .updateTable("api_keys")
        .set({ disabled: 1 })
        .where("hash", "=", hashKey(t.key))
        .execute();

      for (const qs of ["", "?confirm_default_workspace_deletion=false"]) {
        const res = await t.call({
          method: "DELETE",
          url: `/api/v1/workspaces/default${qs}`,
          auth: mgmt.key,
        });
        expect(res.statusCode).toBe(400);
        expect(res.json().error.message).toBe(
          "confirm_default_workspace_deletion: must be true to delete the default workspace",
        );
      }
      const bad = await t.call({
        method: "DELETE",
        url: "/api/v1/workspaces/default?confirm_default_workspace_deletion=maybe",
        auth: mgmt.key,
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.message).toBe("confirm_default_workspace_deletion: must be boolean");

      const ok = await t.call({
        method: "DELETE",
        url: "/api/v1/workspaces/default?confirm_default_workspace_deletion=true",
        auth: mgmt.key,
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual({ deleted: true });

      // Afterwards the organization has no default workspace; a new "default" slug is an ordinary workspace.
      await expect(requireDefaultWorkspace(t.ctx.store.db, t.organizationId)).rejects.toMatchObject({
        status: 400,
        message: "workspace_id: required, the organization has no default workspace",
      });
      const again = await create(t, { name: "Default", slug: "default" }, mgmt.key);
      expect(again.statusCode).toBe(201);
      await expect(requireDefaultWorkspace(t.ctx.store.db, t.organizationId)).rejects.toThrow();
    });

    it("refuses the default workspace while its management key is active", async () => {
      const res = await t.call({
        method: "DELETE",
        url: "/api/v1/workspaces/default?confirm_default_workspace_deletion=true",
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain("Workspace has 1 active API key;");
    });

    it("answers 404 for another organization's workspace by id and by slug, and leaves it", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const theirs = (await create(t, { name: "T", slug: "theirs" }, other.managementKey)).json().data;
      for (const ref of [theirs.id, "theirs"]) {
        expect((await t.call({ method: "DELETE", url: `/api/v1/workspaces/${ref}` })).statusCode).toBe(404);
      }
      const read = await t.call({
        method: "GET",
        url: "/api/v1/workspaces/theirs",
        auth: other.managementKey,
      });
      expect(read.statusCode).toBe(200);
    });
  });

  describe("authentication", () => {
    const routes = [
      { method: "POST" as const, url: "/api/v1/workspaces", payload: { name: "x", slug: "x" } },
      { method: "GET" as const, url: "/api/v1/workspaces" },
      { method: "GET" as const, url: "/api/v1/workspaces/default" },
      { method: "PATCH" as const, url: "/api/v1/workspaces/default", payload: { name: "x" } },
      { method: "DELETE" as const, url: "/api/v1/workspaces/default" },
    ];

    it("answers 401 without a key and 403 for an ordinary key", async () => {
      const ordinary = await addKey(t, t.workspaceId);
      for (const r of routes) {
        const none = await t.call({ ...r, auth: null });
        expect(none.statusCode, `${r.method} ${r.url}`).toBe(401);
        const bad = await t.call({ ...r, auth: "sk-gh-v1-" + "0".repeat(64) });
        expect(bad.statusCode).toBe(401);
        const res = await t.call({ ...r, auth: ordinary.key });
        expect(res.statusCode).toBe(403);
        expect(res.json().error.message).toBe("Only management keys can perform this operation");
      }
      expect(await countWorkspaces(t)).toBe(1);
    });

    it("rate-limits per management key with 429", async () => {
      const limited = await makeTestApp({
        config: {
          rateLimit: {
            management: { max: 2, windowMs: 60_000 },
            keyUpdate: { max: 2, windowMs: 60_000 },
            analytics: { max: 2, windowMs: 60_000 },
            ingest: { max: 2, windowMs: 60_000 },
            inference: { max: 2, windowMs: 60_000 },
          },
        },
      });
      try {
        const codes = [];
        for (let i = 0; i < 3; i++)
          codes.push((await limited.call({ method: "GET", url: "/api/v1/workspaces" })).statusCode);
        expect(codes).toEqual([200, 200, 429]);
        const res = await limited.call({ method: "GET", url: "/api/v1/workspaces" });
        expect(res.statusCode).toBe(429);
        expect(res.json().error.code).toBe(429);
        expect(res.headers["retry-after"]).toBeDefined();
      } finally {
        await limited.close();
      }
    });
  });
});
