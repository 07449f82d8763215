import type { OpenRouter } from "@openrouter/sdk";
import * as errors from "@openrouter/sdk/models/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { rejection } from "./helpers/sdk-errors.js";

/**
 * Wire compatibility of members: `organization.listMembers`, `workspaces.listMembers`,
 * `workspaces.bulkAddMembers` and `workspaces.bulkRemoveMembers` of @openrouter/sdk 1.3.19 against
 * a listening server. Every response must parse (a ResponseValidationError or an unexpected status
 * would throw); the parsed values are then checked field by field. Members are created with
 * Gatehouse's own `POST /organization/members` (the SDK has no such method).
 */

interface Member {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: "org:admin" | "org:member";
}

describe("SDK 1.3.19: organization and workspace members", () => {
  let s: ListeningApp;
  let sdk: OpenRouter;
  const members: Member[] = [];
  const create = async (body: Record<string, unknown>): Promise<Member> => {
    const res = await s.call({
      method: "POST",
      url: "/api/v1/organization/members",
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ data: Member }>().data;
  };

  beforeAll(async () => {
    s = await startListening();
    sdk = s.sdkWithRaw();
    members.push(
      await create({ email: "Ada@Example.com", first_name: "Ada", last_name: "Lovelace", role: "org:admin" }),
    );
    for (let i = 0; i < 4; i++) {
      s.clock.advance(1000);
      members.push(await create({ email: `member${i}@example.com` }));
    }
  });
  afterAll(() => s.close());

  it("organization.listMembers: every member with its fields, paged by the SDK's iterator", async () => {
    const all = await sdk.organization.listMembers();
    expect(all.result).toEqual({
      data: members.map((m) => ({
        id: m.id,
        email: m.email,
        firstName: m.first_name,
        lastName: m.last_name,
        role: m.role,
      })),
      totalCount: 5,
    });
    expect(all.result.data[0]).toEqual({
      id: expect.stringMatching(/^user_/),
      email: "ada@example.com",
      firstName: "Ada",
      lastName: "Lovelace",
      role: "org:admin",
    });
    expect(all.result.data[1]).toMatchObject({ firstName: null, lastName: null, role: "org:member" });

    // Pages of 2: 2, 2, 1 (the iterator stops at the short page).
    const pages: string[][] = [];
    for await (const page of await sdk.organization.listMembers({ limit: 2 })) {
      pages.push(page.result.data.map((m) => m.id));
      expect(page.result.totalCount).toBe(5);
    }
    expect(pages).toEqual(
      [members.slice(0, 2), members.slice(2, 4), members.slice(4)].map((p) => p.map((m) => m.id)),
    );
    // A last page exactly `limit` long: the next offset answers [] and the iteration ends.
    const fives: number[] = [];
    for await (const page of await sdk.organization.listMembers({ limit: 5 }))
      fives.push(page.result.data.length);
    expect(fives).toEqual([5, 0]);
    expect((await sdk.organization.listMembers({ offset: null })).result.totalCount).toBe(5);
  });

  it("workspaces.listMembers: the default workspace holds every member, by id and by slug", async () => {
    const byId = await sdk.workspaces.listMembers({ id: s.workspaceId });
    expect(byId.result.totalCount).toBe(5);
    expect(byId.result.data.map((m) => m.userId)).toEqual(members.map((m) => m.id));
    expect(byId.result.data[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      workspaceId: s.workspaceId,
      userId: members[0]!.id,
      role: "admin",
      createdAt: "2026-11-18T12:00:00.000Z",
    });
    expect(byId.result.data.slice(1).every((m) => m.role === "member")).toBe(true);
    expect((await sdk.workspaces.listMembers({ id: "default" })).result).toEqual(byId.result);
    const pages: number[] = [];
    for await (const page of await sdk.workspaces.listMembers({ id: "default", limit: 3 })) {
      pages.push(page.result.data.length);
    }
    expect(pages).toEqual([3, 2]);
  });

  it("bulkAddMembers and bulkRemoveMembers on a workspace, with the counts", async () => {
    const ws = (
      await sdk.workspaces.create({ createWorkspaceRequest: { name: "Research", slug: "research" } })
    ).data;
    expect((await sdk.workspaces.listMembers({ id: ws.id })).result).toEqual({ data: [], totalCount: 0 });

    const ids = [members[0]!.id, members[1]!.id, members[2]!.id];
    const added = await sdk.workspaces.bulkAddMembers({
      id: "research",
      bulkAddWorkspaceMembersRequest: { userIds: ids },
    });
    expect(s.lastRaw()).toMatchObject({ added_count: 3 });
    expect(added.addedCount).toBe(3);
    expect(added.data.map((m) => [m.userId, m.role, m.workspaceId])).toEqual([
      [ids[0], "admin", ws.id],
      [ids[1], "member", ws.id],
      [ids[2], "member", ws.id],
    ]);
    for (const m of added.data) {
      expect(m.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(m.createdAt).toBe(s.clock.now().toISOString());
    }
    const listed = await sdk.workspaces.listMembers({ id: ws.id });
    expect(listed.result.totalCount).toBe(3);
    expect([...listed.result.data].sort((a, b) => a.userId.localeCompare(b.userId))).toEqual(
      [...added.data].sort((a, b) => a.userId.localeCompare(b.userId)),
    );

    // The default workspace: nothing to add, the standing memberships come back.
    const onDefault = await sdk.workspaces.bulkAddMembers({
      id: s.workspaceId,
      bulkAddWorkspaceMembersRequest: { userIds: [members[4]!.id] },
    });
    expect(onDefault).toEqual({
      addedCount: 1,
      data: [(await sdk.workspaces.listMembers({ id: "default" })).result.data[4]],
    });

    const removed = await sdk.workspaces.bulkRemoveMembers({
      id: ws.id,
      bulkRemoveWorkspaceMembersRequest: { userIds: [ids[1]!, members[3]!.id] },
    });
    expect(removed).toEqual({ removedCount: 1 });
    expect(s.lastRaw()).toEqual({ removed_count: 1 });
    expect((await sdk.workspaces.listMembers({ id: ws.id })).result.data.map((m) => m.userId).sort()).toEqual(
      [ids[0], ids[2]].sort(),
    );
  });

  it("a member with an active key in the workspace cannot be removed: BadRequestResponseError naming it", async () => {
    const ws = (await sdk.workspaces.create({ createWorkspaceRequest: { name: "Keys", slug: "keys-ws" } }))
      .data;
    const m = members[2]!;
    await sdk.workspaces.bulkAddMembers({ id: ws.id, bulkAddWorkspaceMembersRequest: { userIds: [m.id] } });
    const key = await sdk.apiKeys.create({
      requestBody: { name: "held", workspaceId: ws.id, creatorUserId: m.id },
    });
    expect(key.data.creatorUserId).toBe(m.id);
    const e = await rejection(
      sdk.workspaces.bulkRemoveMembers({ id: ws.id, bulkRemoveWorkspaceMembersRequest: { userIds: [m.id] } }),
    );
    expect(e).toBeInstanceOf(errors.BadRequestResponseError);
    expect((e as errors.BadRequestResponseError).message).toBe(
      `user_ids: "${m.id}" has active API keys in this workspace; delete them (or let them expire) before removing the member`,
    );
    expect((await sdk.workspaces.listMembers({ id: ws.id })).result.totalCount).toBe(1);
    await sdk.apiKeys.delete({ hash: key.data.hash });
    expect(
      await sdk.workspaces.bulkRemoveMembers({
        id: ws.id,
        bulkRemoveWorkspaceMembersRequest: { userIds: [m.id] },
      }),
    ).toEqual({ removedCount: 1 });
  });

  it("with members, apiKeys.create refuses a creatorUserId that names none (BadRequestResponseError)", async () => {
    const e = await rejection(
      sdk.apiKeys.create({ requestBody: { name: "x", creatorUserId: "user_stranger" } }),
    );
    expect(e).toBeInstanceOf(errors.BadRequestResponseError);
    expect((e as Error).message).toMatch(
      /^creator_user_id: "user_stranger" is not a member of this organization/,
    );
  });
});
