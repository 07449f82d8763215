import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { insertWorkspace } from "../../src/domain/workspaces/workspace-repo.js";
import { hashKey } from "../../src/lib/ids.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";

describe("GET /keys", () => {
  let t: TestApp;
  let second: string;
  /** Hashes of the default workspace's keys, newest first. */
  const created: string[] = [];
  let disabledHash: string;

  beforeAll(async () => {
    t = await makeTestApp();
    // 105 keys: pairs share a created_at (the clock moves every other key), so the id tiebreak matters.
    for (let i = 0; i < 105; i++) {
      if (i % 2 === 0) t.clock.advance(1000);
      const res = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: `key-${i}` } });
      created.unshift(res.json().data.hash);
    }
    disabledHash = created[3]!;
    await t.call({ method: "PATCH", url: `/api/v1/keys/${disabledHash}`, payload: { disabled: true } });
    second = await insertWorkspace(t.ctx.store.db, {
      organizationId: t.organizationId,
      name: "Second",
      slug: "second",
      isDefault: false,
      createdBy: null,
      now: t.clock.now(),
    });
    await t.call({
      method: "POST",
      url: "/api/v1/keys",
      payload: { name: "elsewhere", workspace_id: second },
    });
  });
  afterAll(() => t.close());

  const list = async (query = "") => {
    const res = await t.call({ method: "GET", url: `/api/v1/keys${query}` });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(["data"]);
    return body.data as { hash: string; name: string; disabled: boolean; workspace_id: string }[];
  };

  it("returns the 100 most recent enabled keys of the default workspace, newest first", async () => {
    const page = await list();
    const expected = created.filter((h) => h !== disabledHash).slice(0, 100);
    expect(page.map((k) => k.hash)).toEqual(expected);
    expect(page.every((k) => k.workspace_id === t.workspaceId && !k.disabled)).toBe(true);
  });

  it("never lists management keys", async () => {
    const all = [
      ...(await list("?include_disabled=true")),
      ...(await list("?include_disabled=true&offset=100")),
    ];
    expect(all.map((k) => k.hash)).not.toContain(hashKey(t.key));
    expect(all).toHaveLength(105);
  });

  it("includes disabled keys on request", async () => {
    const page = await list("?include_disabled=true");
    expect(page.map((k) => k.hash)).toEqual(created.slice(0, 100));
    expect(page[3]).toMatchObject({ hash: disabledHash, disabled: true });
    expect((await list("?include_disabled=false")).map((k) => k.hash)).not.toContain(disabledHash);
  });

  it("pages with offset", async () => {
    expect((await list("?include_disabled=true&offset=100")).map((k) => k.hash)).toEqual(created.slice(100));
    expect((await list("?include_disabled=true&offset=3")).map((k) => k.hash)).toEqual(created.slice(3, 103));
    expect(await list("?offset=1000")).toEqual([]);
    expect((await list("?offset=")).length).toBe(100);
  });

  it("lists another workspace by workspace_id", async () => {
    const page = await list(`?workspace_id=${second}`);
    expect(page.map((k) => k.name)).toEqual(["elsewhere"]);
    expect((await list(`?workspace_id=${t.workspaceId}`)).length).toBe(100);
  });

  it("rejects bad parameters with 400 naming the parameter", async () => {
    const other = await createOrganization(t.ctx.store, t.clock, "Other");
    for (const [query, message] of [
      ["?offset=-1", "offset: must be >= 0"],
      ["?offset=1.5", "offset: must be integer or null"],
      ["?offset=abc", "offset: must be integer or null"],
      ["?include_disabled=yes", "include_disabled: must be boolean"],
      ["?workspace_id=nope", "workspace_id: must be a valid uuid"],
      [`?workspace_id=${other.workspaceId}`, "workspace_id: no workspace"],
    ] as const) {
      const res = await t.call({ method: "GET", url: `/api/v1/keys${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.message).toContain(message);
    }
  });

  it("shows each organization only its own keys", async () => {
    const other = await createOrganization(t.ctx.store, t.clock, "Isolated");
    const res = await t.call({ method: "GET", url: "/api/v1/keys", auth: other.managementKey });
    expect(res.json()).toEqual({ data: [] });
  });

  it("is empty when the default workspace is gone and no workspace is named", async () => {
    const o = await createOrganization(t.ctx.store, t.clock, "No default");
    await t.ctx.store.db
      .updateTable("workspaces")
      .set({ deleted_at: t.clock.now().toISOString() })
      .where("id", "=", o.workspaceId)
      .execute();
    const res = await t.call({ method: "GET", url: "/api/v1/keys", auth: o.managementKey });
    expect(res.json()).toEqual({ data: [] });
    const create = await t.call({
      method: "POST",
      url: "/api/v1/keys",
      payload: { name: "x" },
      auth: o.managementKey,
    });
    expect(create.statusCode).toBe(400);
    expect(create.json().error.message).toMatch(/^workspace_id: required/);
  });
});
