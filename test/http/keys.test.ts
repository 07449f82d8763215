import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { insertWorkspace } from "../../src/domain/workspaces/workspace-repo.js";
import { hashKey } from "../../src/lib/ids.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";

const RECORD_FIELDS = [
  "byok_usage",
  "byok_usage_daily",
  "byok_usage_monthly",
  "byok_usage_weekly",
  "created_at",
  "creator_user_id",
  "disabled",
  "expires_at",
  "external_user",
  "hash",
  "include_byok_in_limit",
  "label",
  "limit",
  "limit_remaining",
  "limit_reset",
  "name",
  "updated_at",
  "usage",
  "usage_daily",
  "usage_monthly",
  "usage_weekly",
  "workspace_id",
];

describe("API keys", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  const create = (payload: unknown, auth?: string | null) =>
    t.call({ method: "POST", url: "/api/v1/keys", payload: payload as object, auth });
  const patch = (hash: string, payload: unknown) =>
    t.call({ method: "PATCH", url: `/api/v1/keys/${hash}`, payload: payload as object });
  const get = (hash: string, auth?: string | null) =>
    t.call({ method: "GET", url: `/api/v1/keys/${hash}`, auth });
  const newKey = async (payload: Record<string, unknown> = {}) => {
    const res = await create({ name: "k", ...payload });
    expect(res.statusCode).toBe(201);
    return res.json<{ data: Record<string, any>; key: string }>();
  };
  const rawRow = (hash: string) =>
    t.ctx.store.db.selectFrom("api_keys").selectAll().where("hash", "=", hash).executeTakeFirstOrThrow();

  describe("POST /keys", () => {
    it("creates an ordinary key in the default workspace and shows the key once", async () => {
      const res = await create({ name: "Production" });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(["data", "key"]);
      expect(body.key).toMatch(/^sk-gh-v1-[0-9a-f]{64}$/);
      expect(Object.keys(body.data).sort()).toEqual(RECORD_FIELDS);
      expect(body.data).toEqual({
        hash: hashKey(body.key),
        name: "Production",
        label: `${body.key.slice(0, 12)}...${body.key.slice(-4)}`,
        disabled: false,
        limit: null,
        limit_remaining: null,
        limit_reset: null,
        include_byok_in_limit: false,
        usage: 0,
        usage_daily: 0,
        usage_weekly: 0,
        usage_monthly: 0,
        byok_usage: 0,
        byok_usage_daily: 0,
        byok_usage_weekly: 0,
        byok_usage_monthly: 0,
        created_at: "2026-11-18T12:00:00.000Z",
        updated_at: "2026-11-18T12:00:00.000Z",
        creator_user_id: null,
        external_user: null,
        workspace_id: t.workspaceId,
        expires_at: null,
      });
      const row = await rawRow(body.data.hash);
      expect(Number(row.is_management)).toBe(0);
      // The key string is never shown again.
      expect((await get(body.data.hash)).json()).not.toHaveProperty("key");
    });

    it("accepts every optional field", async () => {
      const ws = await insertWorkspace(t.ctx.store.db, {
        organizationId: t.organizationId,
        name: "Second",
        slug: "second",
        isDefault: false,
        createdBy: null,
        now: t.clock.now(),
      });
      const { data } = await newKey({
        name: "Partner",
        limit: 12.5,
        limit_reset: "weekly",
        include_byok_in_limit: true,
        expires_at: "2027-01-01T00:00:00Z",
        creator_user_id: "user_123",
        workspace_id: ws,
        external: { user: "partner-user-7", api_key: "pk_live_0123456789abcdefghijklmnopqrstuv" },
      });
      expect(data).toMatchObject({
        name: "Partner",
        limit: 12.5,
        limit_remaining: 12.5,
        limit_reset: "weekly",
        include_byok_in_limit: true,
        expires_at: "2027-01-01T00:00:00.000Z",
        creator_user_id: "user_123",
        workspace_id: ws,
        external_user: "partner-user-7",
      });
      expect(JSON.stringify(data)).not.toContain("pk_live");
      const row = await rawRow(data.hash);
      expect(row.external_key_hash).toBe(hashKey("pk_live_0123456789abcdefghijklmnopqrstuv"));
      expect(row.limit_nano?.toString()).toBe("12500000000");
    });

    it("accepts explicit nulls and fractional seconds", async () => {
      const { data } = await newKey({
        limit: null,
        limit_reset: null,
        expires_at: "2026-12-31T23:59:59.123Z",
        creator_user_id: null,
      });
      expect(data).toMatchObject({ limit: null, limit_reset: null, expires_at: "2026-12-31T23:59:59.123Z" });
    });

    it("stores only the hash of the key", async () => {
      const { key, data } = await newKey({ name: "secret holder" });
      const rows = await t.ctx.store.db.selectFrom("api_keys").selectAll().execute();
      const dump = JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
      expect(dump).not.toContain(key);
      expect(dump).not.toContain(key.slice("sk-gh-v1-".length));
      expect(dump).not.toContain(key.slice(12, -4));
      expect(dump).toContain(data.hash);
    });

    it.each([
      [{}, "name: is required"],
      [{ name: "" }, "name: at least 1 character"],
      [{ name: "x".repeat(201) }, "name: at most 200 characters"],
      [{ name: "   " }, "name: must not be blank"],
      [{ name: 12 }, "name: must be string"],
      [{ name: "k", limit: "10" }, "limit: must be number or null"],
      [{ name: "k", limit: -1 }, "limit: must be >= 0"],
      [{ name: "k", limit: 1_000_000_001 }, "limit: must be <= 1000000000"],
      [{ name: "k", limit_reset: "yearly" }, "limit_reset: must be one of daily, weekly, monthly"],
      [{ name: "k", include_byok_in_limit: 1 }, "include_byok_in_limit: must be boolean"],
      [{ name: "k", expires_at: "2027-01-01T00:00Z" }, "expires_at: must be a valid date-time"],
      [
        { name: "k", expires_at: "2027-01-01T00:00:00+02:00" },
        "expires_at: must be a UTC timestamp with seconds",
      ],
      [{ name: "k", expires_at: "2027-01-01 00:00:00Z" }, "expires_at: must be a UTC timestamp with seconds"],
      [{ name: "k", expires_at: "2027-02-30T00:00:00Z" }, "expires_at: must be a valid date-time"],
      [{ name: "k", expires_at: "2026-11-18T11:59:59Z" }, "expires_at: must be in the future"],
      [{ name: "k", expires_at: "2026-11-18T12:00:00Z" }, "expires_at: must be in the future"],
      [{ name: "k", expires_at: 1767225600 }, "expires_at: must be string or null"],
      [{ name: "k", expires_at: "2027-01-01T00:00:00" }, "expires_at: must be a valid date-time"],
      [{ name: "k", creator_user_id: "" }, "creator_user_id: at least 1 character"],
      [{ name: "k", workspace_id: "not-a-uuid" }, "workspace_id: must be a valid uuid"],
      [{ name: "k", workspace_id: "00000000-0000-4000-8000-000000000000" }, "workspace_id: no workspace"],
      [{ name: "k", external: { api_key: "x".repeat(40) } }, "external.user: is required"],
      [{ name: "k", external: { user: "u", api_key: "short" } }, "external.api_key: at least 32 characters"],
      [
        { name: "k", external: { user: "u", api_key: "ab".repeat(20) } },
        "external.api_key: is not random enough",
      ],
      [{ name: "k", external: "u" }, "external: must be object"],
      [[{ name: "k" }], "body: must be object"],
      ["k", "body: must be object"],
    ])("rejects %j with 400 naming the field", async (payload, message) => {
      const before = await t.ctx.store.db.selectFrom("api_keys").select("hash").execute();
      const res = await t.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: JSON.stringify(payload),
        headers: { "content-type": "application/json" },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        error: { code: 400, message: expect.stringContaining(message), metadata: null },
      });
      const after = await t.ctx.store.db.selectFrom("api_keys").select("hash").execute();
      expect(after.length).toBe(before.length);
    });

    it("rejects a workspace of another organization and a deleted workspace with 400", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const res = await create({ name: "k", workspace_id: other.workspaceId });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toMatch(/^workspace_id: /);
      const gone = await insertWorkspace(t.ctx.store.db, {
        organizationId: t.organizationId,
        name: "Gone",
        slug: "gone",
        isDefault: false,
        createdBy: null,
        now: t.clock.now(),
      });
      await t.ctx.store.db
        .updateTable("workspaces")
        .set({ deleted_at: t.clock.now().toISOString() })
        .where("id", "=", gone)
        .execute();
      expect((await create({ name: "k", workspace_id: gone })).statusCode).toBe(400);
    });

    it("refuses non-JSON bodies", async () => {
      const res = await t.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: "name=k",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      expect(res.statusCode).toBe(415);
      const bad = await t.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: "{not json",
        headers: { "content-type": "application/json" },
      });
      expect(bad.statusCode).toBe(400);
    });
  });

  describe("GET /keys/{hash}", () => {
    it("reads a key; case of the hash does not matter", async () => {
      const { data } = await newKey({ name: "readable" });
      const res = await get(data.hash);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ data });
      expect((await get(data.hash.toUpperCase())).json()).toEqual({ data });
    });

    it("is 404 for unknown, malformed, management and cross-organization hashes", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other org");
      const theirs = await t.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: { name: "theirs" },
        auth: other.managementKey,
      });
      expect(theirs.statusCode).toBe(201);
      for (const hash of ["0".repeat(64), "xyz", "0".repeat(63), hashKey(t.key), theirs.json().data.hash]) {
        const res = await get(hash);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ error: { code: 404, message: "API key not found", metadata: null } });
      }
    });
  });

  describe("PATCH /keys/{hash}", () => {
    it("updates each field and changes updated_at", async () => {
      const { data } = await newKey({ name: "before" });
      t.clock.advance(60_000);
      const res = await patch(data.hash, {
        name: "after",
        disabled: true,
        limit: 5,
        limit_reset: "daily",
        include_byok_in_limit: true,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({
        ...data,
        name: "after",
        disabled: true,
        limit: 5,
        limit_remaining: 5,
        limit_reset: "daily",
        include_byok_in_limit: true,
        updated_at: t.clock.now().toISOString(),
      });
      t.clock.advance(1000);
      const cleared = await patch(data.hash, { limit: null, limit_reset: null, disabled: false });
      expect(cleared.json().data).toMatchObject({
        name: "after",
        limit: null,
        limit_remaining: null,
        limit_reset: null,
        disabled: false,
        include_byok_in_limit: true,
        updated_at: t.clock.now().toISOString(),
      });
    });

    it("accepts {} and only touches updated_at", async () => {
      const { data } = await newKey({ name: "same", limit: 3 });
      t.clock.advance(5000);
      const res = await patch(data.hash, {});
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ ...data, updated_at: t.clock.now().toISOString() });
    });

    it.each([
      [{ name: 12 }, "name: must be string"],
      [{ name: "" }, "name: at least 1 character"],
      [{ name: "x".repeat(201) }, "name: at most 200 characters"],
      [{ disabled: 1 }, "disabled: must be boolean"],
      [{ disabled: "true" }, "disabled: must be boolean"],
      [{ limit: "10" }, "limit: must be number or null"],
      [{ limit: 1e10 }, "limit: must be <= 1000000000"],
      [{ limit_reset: "yearly" }, "limit_reset: must be one of daily, weekly, monthly"],
      [{ include_byok_in_limit: "yes" }, "include_byok_in_limit: must be boolean"],
      [{ name: "valid", disabled: 1 }, "disabled: must be boolean"],
      [{ limit: 7, name: "   " }, "name: must not be blank"],
      [[], "body: must be object"],
      [null, "body: must be object"],
      [42, "body: must be object"],
    ])("rejects %j with 400 and applies nothing", async (payload, message) => {
      const { data } = await newKey({ name: "untouched", limit: 1 });
      t.clock.advance(1000);
      const res = await t.call({
        method: "PATCH",
        url: `/api/v1/keys/${data.hash}`,
        payload: JSON.stringify(payload),
        headers: { "content-type": "application/json" },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain(message);
      expect((await get(data.hash)).json().data).toEqual(data);
    });

    it("is 400 without a body and 404 for unknown keys", async () => {
      const { data } = await newKey();
      expect((await t.call({ method: "PATCH", url: `/api/v1/keys/${data.hash}` })).statusCode).toBe(400);
      expect((await patch("a".repeat(64), { name: "x" })).statusCode).toBe(404);
      expect((await patch("nothex", { name: "x" })).statusCode).toBe(404);
      expect((await patch(hashKey(t.key), { disabled: true })).statusCode).toBe(404);
    });
  });

  describe("DELETE /keys/{hash}", () => {
    it("soft-deletes: gone from reads, lists and authentication, row kept", async () => {
      const { data, key } = await newKey({ name: "doomed" });
      expect((await t.call({ method: "GET", url: "/api/v1/key", auth: key })).statusCode).toBe(200);
      t.clock.advance(1000);
      const res = await t.call({ method: "DELETE", url: `/api/v1/keys/${data.hash}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ deleted: true });
      expect((await get(data.hash)).statusCode).toBe(404);
      expect((await patch(data.hash, { name: "zombie" })).statusCode).toBe(404);
      expect((await t.call({ method: "DELETE", url: `/api/v1/keys/${data.hash}` })).statusCode).toBe(404);
      const list = await t.call({ method: "GET", url: "/api/v1/keys?include_disabled=true" });
      expect(list.json().data.map((k: { hash: string }) => k.hash)).not.toContain(data.hash);
      expect((await t.call({ method: "GET", url: "/api/v1/key", auth: key })).statusCode).toBe(401);
      const row = await rawRow(data.hash);
      expect(row.name).toBe("doomed");
      expect(row.deleted_at).toBe(t.clock.now().toISOString());
    });

    it("is 404 for malformed, management and other organizations' keys", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Third");
      const theirs = await t.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: { name: "theirs" },
        auth: other.managementKey,
      });
      for (const hash of ["abc", hashKey(t.key), theirs.json().data.hash]) {
        expect((await t.call({ method: "DELETE", url: `/api/v1/keys/${hash}` })).statusCode).toBe(404);
      }
      // Still alive for its owner.
      const mine = await t.call({
        method: "GET",
        url: `/api/v1/keys/${theirs.json().data.hash}`,
        auth: other.managementKey,
      });
      expect(mine.statusCode).toBe(200);
    });
  });

  describe("authentication and authorisation", () => {
    it("is 401 without a key or with an unknown key on every operation", async () => {
      const { data } = await newKey();
      const ops = [
        { method: "POST" as const, url: "/api/v1/keys", payload: { name: "x" } },
        { method: "GET" as const, url: "/api/v1/keys" },
        { method: "GET" as const, url: `/api/v1/keys/${data.hash}` },
        { method: "PATCH" as const, url: `/api/v1/keys/${data.hash}`, payload: { name: "x" } },
        { method: "DELETE" as const, url: `/api/v1/keys/${data.hash}` },
        { method: "GET" as const, url: "/api/v1/key" },
      ];
      for (const op of ops) {
        for (const auth of [null, "sk-gh-v1-" + "0".repeat(64)]) {
          const res = await t.call({ ...op, auth });
          expect(res.statusCode, `${op.method} ${op.url}`).toBe(401);
          expect(res.json().error.code).toBe(401);
        }
      }
      expect((await get(data.hash)).json().data.name).toBe("k");
    });

    it("is 403 for an ordinary key on management operations", async () => {
      const { data, key } = await newKey({ name: "ordinary" });
      const ops = [
        { method: "POST" as const, url: "/api/v1/keys", payload: { name: "x" } },
        { method: "GET" as const, url: "/api/v1/keys" },
        { method: "GET" as const, url: `/api/v1/keys/${data.hash}` },
        { method: "PATCH" as const, url: `/api/v1/keys/${data.hash}`, payload: { name: "x" } },
        { method: "DELETE" as const, url: `/api/v1/keys/${data.hash}` },
      ];
      for (const op of ops) {
        const res = await t.call({ ...op, auth: key });
        expect(res.statusCode).toBe(403);
        expect(res.json()).toEqual({
          error: { code: 403, message: "Only management keys can perform this operation", metadata: null },
        });
      }
      expect((await get(data.hash)).json().data.name).toBe("ordinary");
    });

    it("an expired key authenticates as nothing", async () => {
      const { key } = await newKey({ expires_at: "2026-11-18T13:00:00Z" });
      const ok = await t.call({ method: "GET", url: "/api/v1/key", auth: key });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().data.expires_at).toBe("2026-11-18T13:00:00.000Z");
      const saved = t.clock.now();
      t.clock.set("2026-11-18T13:00:00.000Z");
      expect((await t.call({ method: "GET", url: "/api/v1/key", auth: key })).statusCode).toBe(401);
      t.clock.set(saved);
    });

    it("a disabled key authenticates as nothing until enabled again", async () => {
      const { key, data } = await newKey();
      await patch(data.hash, { disabled: true });
      expect((await t.call({ method: "GET", url: "/api/v1/key", auth: key })).statusCode).toBe(401);
      await patch(data.hash, { disabled: false });
      expect((await t.call({ method: "GET", url: "/api/v1/key", auth: key })).statusCode).toBe(200);
    });
  });

  describe("GET /key", () => {
    it("describes an ordinary key", async () => {
      const { key, data } = await newKey({
        name: "me",
        limit: 10,
        limit_reset: "monthly",
        creator_user_id: "u1",
      });
      const res = await t.call({ method: "GET", url: "/api/v1/key", auth: key });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        data: {
          label: data.label,
          limit: 10,
          limit_remaining: 10,
          limit_reset: "monthly",
          include_byok_in_limit: false,
          usage: 0,
          usage_daily: 0,
          usage_weekly: 0,
          usage_monthly: 0,
          byok_usage: 0,
          byok_usage_daily: 0,
          byok_usage_weekly: 0,
          byok_usage_monthly: 0,
          creator_user_id: "u1",
          expires_at: null,
          is_free_tier: false,
          is_management_key: false,
          is_provisioning_key: false,
          rate_limit: { interval: "1m", note: expect.any(String), requests: -1 },
          allowed_data_regions: ["global"],
          free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
          organization_id: t.organizationId,
          workspace_id: t.workspaceId,
        },
      });
    });

    it("describes a management key", async () => {
      const res = await t.call({ method: "GET", url: "/api/v1/key" });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({
        label: `${t.key.slice(0, 12)}...${t.key.slice(-4)}`,
        is_management_key: true,
        is_provisioning_key: true,
        organization_id: t.organizationId,
      });
    });
  });
});
