import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { hashKey } from "../../src/lib/ids.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { chat } from "../helpers/gateway-client.js";

/**
 * GET /api/v1/activity's `workspace_id`: one resolution for both forms of the report (plain and
 * group_by=workspace). It names a workspace of the organization by UUID (any case) or slug, a
 * deleted one included (its history stays); anything else is the same 400, naming the query
 * parameter the client sent rather than the analytics filter it becomes.
 */
describe("GET /activity: workspace_id", () => {
  let t: TestApp;
  /** A second workspace of the organization, its slug, and a workspace of another organization. */
  let team: { id: string; slug: string };
  let foreignWorkspace: string;
  /** A workspace deleted by the last test, with its key. */
  let gone: string;
  let goneKey: string;
  /** Requests made in each workspace. */
  const made = { default: 2, team: 3, gone: 1 };
  const DAY = "2026-11-18";

  const activity = (query: string) => t.call({ method: "GET", url: `/api/v1/activity?${query}` });
  type Row = { requests: number; workspace_id?: string; model: string };
  const rowsOf = async (query: string): Promise<Row[]> => {
    const r = await activity(query);
    expect(r.statusCode, r.body).toBe(200);
    return r.json<{ data: Row[] }>().data;
  };
  const requests = (rows: Row[]) => rows.reduce((n, r) => n + r.requests, 0);

  const createKey = async (workspaceId: string): Promise<string> => {
    const r = await t.call({
      method: "POST",
      url: "/api/v1/keys",
      payload: { name: `key in ${workspaceId}`, workspace_id: workspaceId },
    });
    expect(r.statusCode, r.body).toBe(201);
    return r.json<{ key: string }>().key;
  };
  const chatTimes = async (key: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await chat(t, key, {
        model: "mock/echo",
        messages: [{ role: "user", content: `request ${i}` }],
      });
      expect(r.status, r.text).toBe(200);
    }
  };

  beforeAll(async () => {
    t = await makeTestApp();
    const ws = await t.call({
      method: "POST",
      url: "/api/v1/workspaces",
      payload: { name: "Team", slug: "team-a" },
    });
    expect(ws.statusCode, ws.body).toBe(201);
    team = ws.json<{ data: { id: string; slug: string } }>().data;
    gone = (
      await t.call({ method: "POST", url: "/api/v1/workspaces", payload: { name: "Gone", slug: "gone" } })
    ).json<{ data: { id: string } }>().data.id;
    foreignWorkspace = (await createOrganization(t.ctx.store, t.clock, "Other")).workspaceId;
    await chatTimes(await createKey(t.workspaceId), made.default);
    await chatTimes(await createKey(team.id), made.team);
    goneKey = await createKey(gone);
    await chatTimes(goneKey, made.gone);
    await t.app.gateway.recorder.settled();
    // Activity covers completed UTC days.
    t.clock.advance(86_400_000);
  });
  afterAll(() => t?.close());

  it("without workspace_id: every workspace's requests", async () => {
    expect(requests(await rowsOf(`date=${DAY}`))).toBe(made.default + made.team + made.gone);
    const grouped = await rowsOf(`date=${DAY}&group_by=workspace`);
    expect(new Set(grouped.map((r) => r.workspace_id))).toEqual(new Set([t.workspaceId, team.id, gone]));
  });

  it("a workspace's UUID (any case) or slug: only its requests, in both forms", async () => {
    for (const ref of [team.id, team.id.toUpperCase(), team.slug]) {
      const plain = await rowsOf(`date=${DAY}&workspace_id=${encodeURIComponent(ref)}`);
      expect(requests(plain)).toBe(made.team);
      expect(plain.every((r) => r.workspace_id === undefined)).toBe(true);
      const grouped = await rowsOf(`date=${DAY}&group_by=workspace&workspace_id=${encodeURIComponent(ref)}`);
      expect(requests(grouped)).toBe(made.team);
      expect(grouped.every((r) => r.workspace_id === team.id)).toBe(true);
    }
    expect(requests(await rowsOf(`date=${DAY}&workspace_id=${t.workspaceId}`))).toBe(made.default);
  });

  it("anything else is the same 400 in both forms, naming workspace_id", async () => {
    const refs = [
      "foo", // neither a UUID nor a slug of the organization
      "00000000-0000-4000-8000-000000000000", // a well-formed UUID of no workspace
      foreignWorkspace, // another organization's workspace
    ];
    for (const ref of refs) {
      const answers = [
        await activity(`workspace_id=${encodeURIComponent(ref)}`),
        await activity(`group_by=workspace&workspace_id=${encodeURIComponent(ref)}`),
      ];
      for (const r of answers) {
        expect(r.statusCode, `${JSON.stringify(ref)}: ${r.body}`).toBe(400);
        const message = r.json<{ error: { message: string } }>().error.message;
        expect(message).toBe("workspace_id: no such workspace in this organization");
        expect(message).not.toMatch(/filters/);
      }
    }
    // A NUL never reaches the store (PostgreSQL refuses it in a text parameter): 400 too.
    for (const q of ["", "group_by=workspace&"]) {
      const r = await activity(`${q}workspace_id=${encodeURIComponent(`${team.slug}\u0000`)}`);
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json<{ error: { message: string } }>().error.message).toMatch(/^workspace_id: /);
    }
  });

  it("a deleted workspace's history stays reachable by its UUID, in both forms", async () => {
    // A workspace with active keys cannot be deleted: disable its key first.
    const patch = await t.call({
      method: "PATCH",
      url: `/api/v1/keys/${hashKey(goneKey)}`,
      payload: { disabled: true },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const del = await t.call({ method: "DELETE", url: `/api/v1/workspaces/${gone}` });
    expect(del.statusCode, del.body).toBe(200);
    expect((await t.call({ method: "GET", url: `/api/v1/workspaces/${gone}` })).statusCode).toBe(404);

    expect(requests(await rowsOf(`date=${DAY}&workspace_id=${gone}`))).toBe(made.gone);
    const grouped = await rowsOf(`date=${DAY}&group_by=workspace&workspace_id=${gone}`);
    expect(grouped.map((r) => [r.workspace_id, r.requests])).toEqual([[gone, made.gone]]);
    // Without workspace_id, group_by still lists it: its history is the organization's.
    const all = await rowsOf(`date=${DAY}&group_by=workspace`);
    expect(all.filter((r) => r.workspace_id === gone).map((r) => r.requests)).toEqual([made.gone]);
  });
});
