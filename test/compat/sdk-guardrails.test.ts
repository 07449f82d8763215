import type { OpenRouter } from "@openrouter/sdk";
import * as errors from "@openrouter/sdk/models/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { newKey, newMember } from "../http/guardrails-helpers.js";

/**
 * Wire compatibility: all 13 functions of @openrouter/sdk 1.3.19's `guardrails` against a
 * listening server (docs/guardrails.md). Every answer goes through the SDK's own response schemas
 * (a ResponseValidationError or an unexpected status would throw); the parsed values are checked
 * field by field, and the refusals arrive as the SDK's typed errors.
 */
describe("SDK 1.3.19: guardrails", () => {
  let s: ListeningApp;
  let sdk: OpenRouter;
  beforeAll(async () => {
    s = await startListening();
    sdk = s.sdkWithRaw();
  });
  afterAll(() => s.close());

  it("create → get → list → update → delete, every field parsed", async () => {
    const created = await sdk.guardrails.create({
      createGuardrailRequest: {
        name: "SDK guardrail",
        description: "every field",
        limitUsd: 20,
        resetInterval: "monthly",
        includeByokInBudgets: true,
        allowedModels: ["mock/echo"],
        ignoredModels: ["mock/unavailable"],
        allowedProviders: ["mock"],
        ignoredProviders: null,
        allowedDataRegions: ["europe"],
        enforceZdr: false,
        enforceZdrAnthropic: true,
        enablePaidModelTraining: false,
        contentFilters: [{ pattern: "\\bproject-[a-z]+\\b", action: "redact", label: "[PROJECT]" }],
        contentFilterBuiltins: [
          { slug: "email", action: "redact" },
          { slug: "regex-prompt-injection", action: "block", scanScope: "user_only" },
        ],
      },
    });
    const g = created.data;
    expect(g).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "SDK guardrail",
      description: "every field",
      workspaceId: s.workspaceId,
      limitUsd: 20,
      resetInterval: "monthly",
      includeByokInBudgets: true,
      allowedModels: ["mock/echo"],
      ignoredModels: ["mock/unavailable"],
      allowedProviders: ["mock"],
      ignoredProviders: null,
      allowedDataRegions: ["europe"],
      enforceZdr: false,
      enforceZdrAnthropic: true,
      enforceZdrOpenai: false,
      enforceZdrGoogle: false,
      enforceZdrXai: false,
      enforceZdrOther: false,
      enableFreeModelPublication: null,
      enableFreeModelTraining: null,
      enablePaidModelTraining: false,
      contentFilters: [{ pattern: "\\bproject-[a-z]+\\b", action: "redact", label: "[PROJECT]" }],
      contentFilterBuiltins: [
        { slug: "email", action: "redact", label: "[EMAIL]" },
        {
          slug: "regex-prompt-injection",
          action: "block",
          label: "[PROMPT_INJECTION]",
          scanScope: "user_only",
        },
      ],
      createdAt: "2026-11-18T12:00:00.000Z",
      updatedAt: "2026-11-18T12:00:00.000Z",
    });
    // The extension field reaches the wire; the SDK drops it.
    expect(s.lastRaw()).toMatchObject({ data: { is_default: false } });

    expect((await sdk.guardrails.get({ id: g.id })).data).toEqual(g);
    const listed = await sdk.guardrails.list();
    expect(listed.result).toEqual({ data: [g], totalCount: 1 });
    const inWorkspace = await sdk.guardrails.list({ workspaceId: s.workspaceId, offset: 0, limit: 10 });
    expect(inWorkspace.result.data).toEqual([g]);

    s.clock.advance(60_000);
    const updated = await sdk.guardrails.update({
      id: g.id,
      updateGuardrailRequest: {
        name: "SDK guardrail, renamed",
        allowedModels: ["mock/echo", "mock/embed"],
        contentFilters: null,
        limitUsd: null,
      },
    });
    expect(updated.data).toEqual({
      ...g,
      name: "SDK guardrail, renamed",
      allowedModels: ["mock/echo", "mock/embed"],
      contentFilters: null,
      limitUsd: null,
      resetInterval: null,
      updatedAt: "2026-11-18T12:01:00.000Z",
    });
    expect(await sdk.guardrails.delete({ id: g.id })).toEqual({ deleted: true });
    await expect(sdk.guardrails.get({ id: g.id })).rejects.toBeInstanceOf(errors.NotFoundResponseError);
  });

  it("pages guardrails through the SDK's PageIterator", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      s.clock.advance(1_000);
      ids.push((await sdk.guardrails.create({ createGuardrailRequest: { name: `page ${i}` } })).data.id);
    }
    const seen: string[] = [];
    for await (const page of await sdk.guardrails.list({ limit: 2 })) {
      seen.push(...page.result.data.map((g) => g.id));
    }
    expect(seen).toEqual(ids);
    for (const id of ids) await sdk.guardrails.delete({ id });
  });

  it("the workspace default guardrail: get before any write, update stores it, delete resets it", async () => {
    const ws = await sdk.workspaces.get({ id: s.workspaceId });
    const id = ws.data.defaultGuardrailId;
    const logical = (await sdk.guardrails.get({ id })).data;
    expect(logical).toMatchObject({
      id,
      name: `Workspace ${s.workspaceId} Default`,
      workspaceId: s.workspaceId,
    });
    expect((await sdk.guardrails.list()).result.totalCount).toBe(0);
    const stored = (
      await sdk.guardrails.update({
        id,
        updateGuardrailRequest: { allowedProviders: ["mock"], enforceZdr: true },
      })
    ).data;
    expect(stored).toMatchObject({ id, allowedProviders: ["mock"], enforceZdrXai: true });
    expect((await sdk.guardrails.list({ workspaceId: s.workspaceId })).result.data).toEqual([stored]);
    await expect(
      sdk.guardrails.bulkAssignKeys({ id, bulkAssignKeysRequest: { keyHashes: ["a".repeat(64)] } }),
    ).rejects.toBeInstanceOf(errors.BadRequestResponseError);
    expect(await sdk.guardrails.delete({ id })).toEqual({ deleted: true });
    expect((await sdk.guardrails.get({ id })).data).toEqual(logical);
  });

  it("key assignments: bulk assign, list per guardrail and all, bulk unassign", async () => {
    const g = (await sdk.guardrails.create({ createGuardrailRequest: { name: "keys" } })).data;
    const k1 = await newKey(s, "sdk k1");
    const k2 = await newKey(s, "sdk k2");
    const assigned = await sdk.guardrails.bulkAssignKeys({
      id: g.id,
      bulkAssignKeysRequest: { keyHashes: [k1, k2] },
    });
    expect(assigned).toEqual({ assignedCount: 2 });
    const one = await sdk.guardrails.listGuardrailKeyAssignments({ id: g.id });
    expect(one.result.totalCount).toBe(2);
    expect(one.result.data.map((a) => a.keyHash).sort()).toEqual([k1, k2].sort());
    expect(one.result.data.find((a) => a.keyHash === k1)).toEqual({
      id: expect.any(String),
      guardrailId: g.id,
      keyHash: k1,
      keyName: "sdk k1",
      keyLabel: expect.stringMatching(/^sk-gh-v1-/),
      assignedBy: null,
      createdAt: expect.any(String),
    });
    const all = await sdk.guardrails.listKeyAssignments({ offset: 0, limit: 50 });
    expect(all.result.data).toEqual(expect.arrayContaining(one.result.data));
    expect((await sdk.guardrails.listKeyAssignments()).result.totalCount).toBe(2);
    const removed = await sdk.guardrails.bulkUnassignKeys({
      id: g.id,
      bulkUnassignKeysRequest: { keyHashes: [k1] },
    });
    expect(removed).toEqual({ unassignedCount: 1 });
    expect(
      (await sdk.guardrails.listGuardrailKeyAssignments({ id: g.id })).result.data.map((a) => a.keyHash),
    ).toEqual([k2]);
    await expect(
      sdk.guardrails.bulkAssignKeys({ id: g.id, bulkAssignKeysRequest: { keyHashes: ["0".repeat(64)] } }),
    ).rejects.toMatchObject({
      statusCode: 400,
      message: "key_hashes[0]: no API key with this hash in the organization",
    });
    await sdk.guardrails.delete({ id: g.id });
  });

  it("member assignments: bulk assign, list per guardrail and all, bulk unassign", async () => {
    const g = (await sdk.guardrails.create({ createGuardrailRequest: { name: "members" } })).data;
    const m = await newMember(s, "sdk@example.com");
    expect(
      await sdk.guardrails.bulkAssignMembers({ id: g.id, bulkAssignMembersRequest: { memberUserIds: [m] } }),
    ).toEqual({ assignedCount: 1 });
    const one = await sdk.guardrails.listGuardrailMemberAssignments({ id: g.id });
    expect(one.result).toEqual({
      data: [
        {
          id: expect.any(String),
          guardrailId: g.id,
          userId: m,
          organizationId: s.organizationId,
          assignedBy: null,
          createdAt: expect.any(String),
        },
      ],
      totalCount: 1,
    });
    expect((await sdk.guardrails.listMemberAssignments()).result).toEqual(one.result);
    expect(
      await sdk.guardrails.bulkUnassignMembers({
        id: g.id,
        bulkUnassignMembersRequest: { memberUserIds: [m] },
      }),
    ).toEqual({ unassignedCount: 1 });
    expect((await sdk.guardrails.listMemberAssignments({})).result).toEqual({ data: [], totalCount: 0 });
    await sdk.guardrails.delete({ id: g.id });
  });

  it("refusals arrive as the SDK's typed errors, with the regex code in the metadata", async () => {
    const bad = sdk.guardrails.create({
      createGuardrailRequest: { name: "bad", contentFilters: [{ pattern: "(\\w+\\s?)*$", action: "block" }] },
    });
    await expect(bad).rejects.toBeInstanceOf(errors.BadRequestResponseError);
    const err = (await bad.catch((e: unknown) => e)) as errors.BadRequestResponseError;
    expect(err.error.message).toMatch(/^content_filters\[0\]\.pattern: nests quantifiers/);
    expect(err.error.metadata).toEqual({
      code: "invalid_regex_pattern",
      field: "content_filters[0].pattern",
    });
    await expect(
      sdk.guardrails.create({ createGuardrailRequest: { name: "half", limitUsd: 5 } }),
    ).rejects.toBeInstanceOf(errors.BadRequestResponseError);
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const call of [
      () => sdk.guardrails.get({ id: unknown }),
      () => sdk.guardrails.update({ id: unknown, updateGuardrailRequest: { name: "x" } }),
      () => sdk.guardrails.delete({ id: unknown }),
      () => sdk.guardrails.listGuardrailKeyAssignments({ id: unknown }),
      () => sdk.guardrails.listGuardrailMemberAssignments({ id: unknown }),
      () =>
        sdk.guardrails.bulkAssignKeys({
          id: unknown,
          bulkAssignKeysRequest: { keyHashes: ["a".repeat(64)] },
        }),
      () =>
        sdk.guardrails.bulkUnassignKeys({
          id: unknown,
          bulkUnassignKeysRequest: { keyHashes: ["a".repeat(64)] },
        }),
      () =>
        sdk.guardrails.bulkAssignMembers({ id: unknown, bulkAssignMembersRequest: { memberUserIds: ["u"] } }),
      () =>
        sdk.guardrails.bulkUnassignMembers({
          id: unknown,
          bulkUnassignMembersRequest: { memberUserIds: ["u"] },
        }),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(errors.NotFoundResponseError);
    }
    // An ordinary key is refused on every guardrail operation (403, mapped by create).
    const ordinary = (
      await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "ordinary" } })
    ).json<{
      key: string;
    }>().key;
    await expect(
      s.sdk(ordinary).guardrails.create({ createGuardrailRequest: { name: "nope" } }),
    ).rejects.toBeInstanceOf(errors.ForbiddenResponseError);
  });
});
