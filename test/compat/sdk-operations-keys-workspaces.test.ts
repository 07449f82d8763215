import type { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addUsage } from "../../src/domain/usage/ledger.js";
import { hashKey } from "../../src/lib/ids.js";
import { usdToNano } from "../../src/lib/money.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * Wire compatibility, success side: every key, workspace and budget operation through the method
 * of @openrouter/sdk 1.3.19 (compatibility-facts §G) against a listening server. Any
 * ResponseValidationError or unexpected status would throw and fail the test; the parsed values
 * are then checked field by field.
 */
describe("SDK 1.3.19: API keys", () => {
  let s: ListeningApp;
  let sdk: OpenRouter;
  beforeAll(async () => {
    s = await startListening();
    sdk = s.sdkWithRaw();
  });
  afterAll(() => s.close());

  it("create → list → get → update → delete, every response parsed with the right values", async () => {
    const expiresAt = new Date("2027-06-30T23:59:59.000Z");
    const created = await sdk.apiKeys.create({
      requestBody: {
        name: "compat key",
        limit: 12.5,
        limitReset: "weekly",
        includeByokInLimit: true,
        expiresAt,
        creatorUserId: "user_compat",
        external: { user: "partner-7", apiKey: "ext_0123456789abcdefghijklmnopqrstuvwxyz" },
      },
    });
    expect(s.lastRaw()).toMatchObject({ data: { expires_at: "2027-06-30T23:59:59.000Z" } });
    const key = created.key;
    expect(key).toMatch(/^sk-gh-v1-[0-9a-f]{64}$/);
    const record = created.data;
    expect(record).toEqual({
      hash: hashKey(key),
      name: "compat key",
      label: `${key.slice(0, 12)}...${key.slice(-4)}`,
      disabled: false,
      limit: 12.5,
      limitRemaining: 12.5,
      limitReset: "weekly",
      includeByokInLimit: true,
      usage: 0,
      usageDaily: 0,
      usageWeekly: 0,
      usageMonthly: 0,
      byokUsage: 0,
      byokUsageDaily: 0,
      byokUsageWeekly: 0,
      byokUsageMonthly: 0,
      createdAt: "2026-11-18T12:00:00.000Z",
      updatedAt: "2026-11-18T12:00:00.000Z",
      creatorUserId: "user_compat",
      externalUser: "partner-7",
      workspaceId: s.workspaceId,
      expiresAt,
    });
    expect(record.expiresAt).toBeInstanceOf(Date);

    const listed = await sdk.apiKeys.list();
    expect(listed.data).toEqual([record]);
    const inWorkspace = await sdk.apiKeys.list({
      includeDisabled: true,
      offset: 0,
      workspaceId: s.workspaceId,
    });
    expect(inWorkspace.data).toEqual([record]);

    expect((await sdk.apiKeys.get({ hash: record.hash })).data).toEqual(record);

    s.clock.advance(60_000);
    const updated = await sdk.apiKeys.update({
      hash: record.hash,
      requestBody: {
        name: "renamed",
        disabled: true,
        limit: null,
        limitReset: null,
        includeByokInLimit: false,
      },
    });
    expect(updated.data).toEqual({
      ...record,
      name: "renamed",
      disabled: true,
      limit: null,
      limitRemaining: null,
      limitReset: null,
      includeByokInLimit: false,
      updatedAt: "2026-11-18T12:01:00.000Z",
    });
    expect(updated.data.expiresAt).toBeInstanceOf(Date);
    // An empty body is allowed by the SDK and changes nothing but updated_at.
    expect((await sdk.apiKeys.update({ hash: record.hash, requestBody: {} })).data.name).toBe("renamed");
    // Disabled keys are listed only on request.
    expect((await sdk.apiKeys.list()).data).toEqual([]);
    expect((await sdk.apiKeys.list({ includeDisabled: true })).data.map((k) => k.hash)).toEqual([
      record.hash,
    ]);

    const deleted = await sdk.apiKeys.delete({ hash: record.hash });
    expect(deleted).toEqual({ deleted: true });
    expect(deleted.deleted).toBe(true);
    expect((await sdk.apiKeys.list({ includeDisabled: true })).data).toEqual([]);
  });

  it("expires_at with milliseconds round-trips as a Date; the SDK's optional headers are accepted", async () => {
    const expiresAt = new Date("2027-01-01T10:00:00.123Z");
    const created = await sdk.apiKeys.create({
      httpReferer: "https://app.example.com",
      appTitle: "Compat suite",
      appCategories: "testing",
      requestBody: { name: "fractional", expiresAt },
    });
    expect(created.data.expiresAt).toEqual(expiresAt);
    expect(s.lastRaw()).toMatchObject({ data: { expires_at: "2027-01-01T10:00:00.123Z" } });
    // offset: null is allowed by the SDK's types; it is sent as no offset at all.
    expect((await sdk.apiKeys.list({ offset: null })).data.map((k) => k.hash)).toContain(created.data.hash);
    await sdk.apiKeys.delete({ hash: created.data.hash });
  });

  it("usage is sent as JSON numbers (bigint nano-USD at rest) and limit_remaining follows it", async () => {
    const { key, data } = await sdk.apiKeys.create({
      requestBody: { name: "spender", limit: 10, limitReset: "monthly", includeByokInLimit: true },
    });
    await s.ctx.store.transaction((trx) =>
      addUsage(trx, {
        organizationId: s.organizationId,
        keyHash: data.hash,
        workspaceId: s.workspaceId,
        at: s.clock.now(),
        usageNano: usdToNano(1.25),
        byokNano: usdToNano(0.5),
      }),
    );
    const got = (await sdk.apiKeys.get({ hash: data.hash })).data;
    expect(got).toMatchObject({
      usage: 1.25,
      usageDaily: 1.25,
      usageWeekly: 1.25,
      usageMonthly: 1.25,
      byokUsage: 0.5,
      byokUsageDaily: 0.5,
      byokUsageWeekly: 0.5,
      byokUsageMonthly: 0.5,
      limit: 10,
      limitRemaining: 8.25,
    });
    expect(s.lastRaw()).toMatchObject({ data: { usage: 1.25, limit_remaining: 8.25 } });
    const current = (await s.sdk(key).apiKeys.getCurrentKeyMetadata()).data;
    expect(current).toMatchObject({ usage: 1.25, byokUsageMonthly: 0.5, limitRemaining: 8.25 });
    await sdk.apiKeys.delete({ hash: data.hash });
  });

  it("explicit nulls are accepted on create; a key without expiry parses expires_at as null", async () => {
    const created = await sdk.apiKeys.create({
      requestBody: { name: "no expiry", limit: null, limitReset: null, expiresAt: null, creatorUserId: null },
    });
    expect(created.data).toMatchObject({
      expiresAt: null,
      limit: null,
      limitRemaining: null,
      limitReset: null,
      includeByokInLimit: false,
      creatorUserId: null,
      externalUser: null,
    });
    await sdk.apiKeys.delete({ hash: created.data.hash });
  });

  it("PATCH expires_at (a Gatehouse extension, sent over plain HTTP): every SDK read parses the result", async () => {
    const created = await sdk.apiKeys.create({
      requestBody: { name: "extend me", expiresAt: new Date("2026-12-01T00:00:00.000Z") },
    });
    const hash = created.data.hash;
    const patchRaw = async (body: unknown) => {
      const res = await fetch(`${s.baseUrl}/keys/${hash}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { data: { expires_at: string | null } } };
    };
    const extended = await patchRaw({ expires_at: "2027-09-30T12:00:00Z" });
    expect(extended.status).toBe(200);
    expect(extended.body.data.expires_at).toBe("2027-09-30T12:00:00.000Z");
    const read = await sdk.apiKeys.get({ hash });
    expect(read.data.expiresAt).toEqual(new Date("2027-09-30T12:00:00.000Z"));
    expect((await sdk.apiKeys.list()).data.find((k) => k.hash === hash)?.expiresAt).toEqual(
      new Date("2027-09-30T12:00:00.000Z"),
    );
    // SDK 1.3.19's update has no expiresAt: its request schema would drop the field (these tests'
    // SDK refuses it, test/helpers/sdk-strict.ts), so an SDK update leaves the expiry as it is.
    await expect(
      sdk.apiKeys.update({
        hash,
        requestBody: { name: "extended", expiresAt: new Date("2028-01-01T00:00:00.000Z") } as never,
      }),
    ).rejects.toThrow(/Unrecognized key.*expiresAt/);
    const viaSdk = await sdk.apiKeys.update({ hash, requestBody: { name: "extended" } });
    expect(viaSdk.data).toMatchObject({ name: "extended", expiresAt: new Date("2027-09-30T12:00:00.000Z") });

    expect((await patchRaw({ expires_at: null })).body.data.expires_at).toBeNull();
    expect((await sdk.apiKeys.get({ hash })).data.expiresAt).toBeNull();
    await sdk.apiKeys.delete({ hash });
  });

  it("getCurrentKeyMetadata parses for the management key and for an ordinary key", async () => {
    const mgmt = await sdk.apiKeys.getCurrentKeyMetadata();
    expect(mgmt.data).toMatchObject({
      isManagementKey: true,
      isProvisioningKey: true,
      isFreeTier: false,
      organizationId: s.organizationId,
      workspaceId: s.workspaceId,
      allowedDataRegions: ["global"],
      freeModelDailyRequests: { limit: 0, remaining: 0, used: 0 },
      limit: null,
      limitRemaining: null,
      expiresAt: null,
      usage: 0,
      byokUsage: 0,
    });
    expect(Number.isInteger(mgmt.data.rateLimit.requests)).toBe(true);

    const expiresAt = new Date("2027-01-01T00:00:00.000Z");
    const { key } = await sdk.apiKeys.create({
      requestBody: { name: "ordinary", limit: 3, limitReset: "daily", expiresAt },
    });
    const mine = await s.sdk(key).apiKeys.getCurrentKeyMetadata();
    expect(mine.data).toMatchObject({
      isManagementKey: false,
      isProvisioningKey: false,
      label: `${key.slice(0, 12)}...${key.slice(-4)}`,
      limit: 3,
      limitRemaining: 3,
      limitReset: "daily",
      workspaceId: s.workspaceId,
      organizationId: s.organizationId,
    });
    expect(mine.data.expiresAt).toEqual(expiresAt);
    expect(mine.data.expiresAt).toBeInstanceOf(Date);
  });
});

describe("SDK 1.3.19: workspaces and budgets", () => {
  let s: ListeningApp;
  let sdk: OpenRouter;
  beforeAll(async () => {
    s = await startListening();
    sdk = s.sdkWithRaw();
  });
  afterAll(() => s.close());

  it("create → get (id and slug) → update → delete parse with the right values", async () => {
    const created = await sdk.workspaces.create({
      createWorkspaceRequest: {
        name: "Compat",
        slug: "compat",
        description: "wire checks",
        defaultTextModel: "openai/gpt-4o",
        defaultImageModel: null,
        defaultProviderSort: "latency",
        disabledServerTools: ["openrouter:web_search", "openrouter:bash"],
        ioLoggingApiKeyIds: [3],
        ioLoggingSamplingRate: 0.25,
        isDataDiscountLoggingEnabled: true,
        isObservabilityBroadcastEnabled: false,
        isObservabilityIoLoggingEnabled: true,
      },
    });
    const ws = created.data;
    expect(ws).toMatchObject({
      name: "Compat",
      slug: "compat",
      description: "wire checks",
      defaultTextModel: "openai/gpt-4o",
      defaultImageModel: null,
      defaultProviderSort: "latency",
      ioLoggingApiKeyIds: [3],
      ioLoggingSamplingRate: 0.25,
      isDataDiscountLoggingEnabled: true,
      isObservabilityBroadcastEnabled: false,
      isObservabilityIoLoggingEnabled: true,
      includeByokInBudgets: false,
      createdBy: null,
      createdAt: "2026-11-18T12:00:00.000Z",
    });
    expect([...(ws.disabledServerTools ?? [])].sort()).toEqual(["openrouter:bash", "openrouter:web_search"]);
    expect(ws.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ws.defaultGuardrailId).toMatch(/^[0-9a-f-]{36}$/);

    expect((await sdk.workspaces.get({ id: ws.id })).data).toEqual(ws);
    expect((await sdk.workspaces.get({ id: "compat" })).data).toEqual(ws);

    const updated = await sdk.workspaces.update({
      id: "compat",
      updateWorkspaceRequest: { name: "Compat 2", description: null, disabledServerTools: null },
    });
    expect(updated.data).toMatchObject({
      id: ws.id,
      name: "Compat 2",
      slug: "compat",
      description: null,
      disabledServerTools: null,
      defaultGuardrailId: ws.defaultGuardrailId,
    });
    expect(typeof updated.data.updatedAt).toBe("string");

    const deleted = await sdk.workspaces.delete({ id: ws.id });
    expect(deleted).toEqual({ deleted: true });
    expect(deleted.deleted).toBe(true);

    // confirm_default_workspace_deletion is accepted (and irrelevant) for other workspaces.
    await sdk.workspaces.create({
      createWorkspaceRequest: { name: "Short", slug: "short", ioLoggingApiKeyIds: [] },
    });
    expect((await sdk.workspaces.get({ id: "short" })).data.ioLoggingApiKeyIds).toEqual([]);
    expect(await sdk.workspaces.delete({ id: "short", confirmDefaultWorkspaceDeletion: true })).toEqual({
      deleted: true,
    });
  });

  it("list is a PageIterator: .result holds the first page, iteration walks every page", async () => {
    // Listed oldest first after the default workspace: one second apart, so the order is fixed.
    for (const slug of ["p-one", "p-two", "p-three", "p-four"]) {
      s.clock.advance(1000);
      await sdk.workspaces.create({ createWorkspaceRequest: { name: slug, slug } });
    }
    const all = await sdk.workspaces.list();
    expect(all.result.totalCount).toBe(5);
    expect(all.result.data.map((w) => w.slug)).toEqual(["default", "p-one", "p-two", "p-three", "p-four"]);

    const first = await sdk.workspaces.list({ limit: 2 });
    expect(first.result.totalCount).toBe(5);
    expect(first.result.data.map((w) => w.slug)).toEqual(["default", "p-one"]);
    const pages: string[][] = [];
    for await (const page of first) {
      expect(page.result.totalCount).toBe(5);
      pages.push(page.result.data.map((w) => w.slug));
    }
    expect(pages).toEqual([["default", "p-one"], ["p-two", "p-three"], ["p-four"]]);

    const second = await first.next();
    expect(second?.result.data.map((w) => w.slug)).toEqual(["p-two", "p-three"]);
    expect((await sdk.workspaces.list({ offset: null })).result.totalCount).toBe(5);
    const fromOffset = await sdk.workspaces.list({ offset: 4, limit: 2 });
    expect(fromOffset.result.data.map((w) => w.slug)).toEqual(["p-four"]);
    expect(await fromOffset.next()).toBeNull();
  });

  it("setBudget / getBudget / listBudgets / deleteBudget parse; lifetime is reset_interval null", async () => {
    await sdk.workspaces.create({ createWorkspaceRequest: { name: "Budgets", slug: "budgets" } });
    const ws = (await sdk.workspaces.get({ id: "budgets" })).data;

    const lifetime = await sdk.workspaces.setBudget({
      workspaceRef: "budgets",
      interval: "lifetime",
      upsertWorkspaceBudgetRequest: { limitUsd: 1000, includeByokInBudgets: true },
    });
    expect(lifetime).toEqual({
      data: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
        workspaceId: ws.id,
        limitUsd: 1000,
        resetInterval: null,
        createdAt: s.clock.now().toISOString(),
        updatedAt: s.clock.now().toISOString(),
      },
      includeByokInBudgets: true,
    });
    expect(s.lastRaw()).toMatchObject({ data: { reset_interval: null }, include_byok_in_budgets: true });

    const limits = { daily: 10, weekly: 50, monthly: 200 } as const;
    for (const [interval, limitUsd] of Object.entries(limits)) {
      const set = await sdk.workspaces.setBudget({
        workspaceRef: ws.id,
        interval: interval as keyof typeof limits,
        upsertWorkspaceBudgetRequest: { limitUsd },
      });
      expect(set.data).toMatchObject({ workspaceId: ws.id, limitUsd, resetInterval: interval });
      // The BYOK flag is workspace-wide: omitted leaves it as the lifetime PUT set it.
      expect(set.includeByokInBudgets).toBe(true);
    }
    // Updating an existing budget keeps its id.
    const again = await sdk.workspaces.setBudget({
      workspaceRef: "budgets",
      interval: "lifetime",
      upsertWorkspaceBudgetRequest: { limitUsd: 999.5, includeByokInBudgets: false },
    });
    expect(again.data).toMatchObject({ id: lifetime.data.id, limitUsd: 999.5, resetInterval: null });
    expect(again.includeByokInBudgets).toBe(false);

    for (const interval of ["daily", "weekly", "monthly", "lifetime"] as const) {
      const got = await sdk.workspaces.getBudget({ workspaceRef: "budgets", interval });
      expect(got.data.resetInterval).toBe(interval === "lifetime" ? null : interval);
      expect(got.data.limitUsd).toBe(interval === "lifetime" ? 999.5 : limits[interval]);
      expect(got.includeByokInBudgets).toBe(false);
    }

    const listed = await sdk.workspaces.listBudgets({ workspaceRef: ws.id });
    expect(listed.data.map((b) => [b.resetInterval, b.limitUsd])).toEqual([
      ["daily", 10],
      ["weekly", 50],
      ["monthly", 200],
      [null, 999.5],
    ]);
    expect(listed.includeByokInBudgets).toBe(false);
    expect((await sdk.workspaces.get({ id: ws.id })).data.includeByokInBudgets).toBe(false);

    const deleted = await sdk.workspaces.deleteBudget({ workspaceRef: "budgets", interval: "weekly" });
    expect(deleted).toEqual({ deleted: true });
    // Idempotent: deleting a budget that does not exist is also {deleted: true}.
    expect(await sdk.workspaces.deleteBudget({ workspaceRef: "budgets", interval: "weekly" })).toEqual({
      deleted: true,
    });
    expect(
      (await sdk.workspaces.listBudgets({ workspaceRef: "budgets" })).data.map((b) => b.resetInterval),
    ).toEqual(["daily", "monthly", null]);
  });
});
