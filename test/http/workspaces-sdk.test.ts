import * as errors from "@openrouter/sdk/models/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startListening, type ListeningApp } from "../helpers/server.js";

/** The official SDK against a listening server: every 2xx body parses, errors map to their classes. */
describe("workspaces and budgets through the official SDK", () => {
  let s: ListeningApp;
  beforeAll(async () => {
    s = await startListening();
  });
  afterAll(() => s.close());

  it("creates, lists, reads, updates and deletes a workspace", async () => {
    const sdk = s.sdk();
    const created = await sdk.workspaces.create({
      createWorkspaceRequest: {
        name: "Research",
        slug: "research",
        description: "R&D",
        defaultProviderSort: "throughput",
        disabledServerTools: ["openrouter:bash"],
        ioLoggingApiKeyIds: [1, 2],
        ioLoggingSamplingRate: 0.5,
        isObservabilityBroadcastEnabled: true,
      },
    });
    expect(created.data).toMatchObject({
      name: "Research",
      slug: "research",
      description: "R&D",
      defaultProviderSort: "throughput",
      disabledServerTools: ["openrouter:bash"],
      ioLoggingApiKeyIds: [1, 2],
      ioLoggingSamplingRate: 0.5,
      isObservabilityBroadcastEnabled: true,
      includeByokInBudgets: false,
      createdBy: null,
    });
    expect(created.data.defaultGuardrailId).toMatch(/^[0-9a-f-]{36}$/);

    const page = await sdk.workspaces.list({ limit: 10, offset: 0 });
    expect(page.result.totalCount).toBe(2);
    expect(page.result.data.map((w) => w.slug)).toEqual(["default", "research"]);

    expect((await sdk.workspaces.get({ id: "research" })).data.id).toBe(created.data.id);
    const updated = await sdk.workspaces.update({
      id: created.data.id,
      updateWorkspaceRequest: { name: "Research 2", disabledServerTools: [] },
    });
    expect(updated.data).toMatchObject({ name: "Research 2", disabledServerTools: null });

    expect(await sdk.workspaces.delete({ id: "research" })).toEqual({ deleted: true });
    await expect(sdk.workspaces.get({ id: "research" })).rejects.toBeInstanceOf(errors.NotFoundResponseError);
  });

  it("io_logging_api_key_ids beyond 2^53 - 1 are 400: the SDK reads them as z.int() (safe integers)", async () => {
    // They were stored, and every later read of the workspace (get, list) failed in the SDK with a
    // ResponseValidationError.
    const sdk = s.sdk();
    await sdk.workspaces.create({ createWorkspaceRequest: { name: "Huge ids", slug: "huge-ids" } });
    for (const ids of [[2 ** 53], [1, 1e20]]) {
      const r = await s.call({
        method: "PATCH",
        url: "/api/v1/workspaces/huge-ids",
        payload: { io_logging_api_key_ids: ids },
      });
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json().error.message).toMatch(/^io_logging_api_key_ids\[\d\]: must be <= 9007199254740991$/);
    }
    const largest = Number.MAX_SAFE_INTEGER;
    const ok = await s.call({
      method: "PATCH",
      url: "/api/v1/workspaces/huge-ids",
      payload: { io_logging_api_key_ids: [largest] },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await sdk.workspaces.get({ id: "huge-ids" })).data.ioLoggingApiKeyIds).toEqual([largest]);
    const page = await sdk.workspaces.list({ limit: 100, offset: 0 });
    expect(page.result.data.map((w) => w.slug)).toContain("huge-ids");
    await sdk.workspaces.delete({ id: "huge-ids" });
  });

  it("maps workspace errors to the SDK's classes", async () => {
    const sdk = s.sdk();
    await expect(
      sdk.workspaces.create({ createWorkspaceRequest: { name: "x", slug: "Not Valid" } }),
    ).rejects.toBeInstanceOf(errors.BadRequestResponseError);
    await sdk.workspaces.create({ createWorkspaceRequest: { name: "dup", slug: "dup" } });
    const dup = await sdk.workspaces
      .create({ createWorkspaceRequest: { name: "dup", slug: "dup" } })
      .catch((e: unknown) => e);
    expect((dup as errors.OpenRouterError).statusCode).toBe(409);
    await expect(sdk.workspaces.delete({ id: "default" })).rejects.toBeInstanceOf(
      errors.BadRequestResponseError,
    );
    await expect(sdk.workspaces.list()).resolves.toBeDefined();
    await expect(s.sdk("sk-gh-v1-" + "1".repeat(64)).workspaces.list()).rejects.toBeInstanceOf(
      errors.UnauthorizedResponseError,
    );
  });

  it("sets, reads, lists and deletes budgets", async () => {
    const sdk = s.sdkWithRaw();
    const set = await sdk.workspaces.setBudget({
      workspaceRef: "default",
      interval: "lifetime",
      upsertWorkspaceBudgetRequest: { limitUsd: 500, includeByokInBudgets: true },
    });
    expect(set.data).toMatchObject({ limitUsd: 500, resetInterval: null });
    expect(set.includeByokInBudgets).toBe(true);
    expect(s.lastRaw()).toMatchObject({ data: { spent_usd: 0, remaining_usd: 500, resets_at: null } });

    await sdk.workspaces.setBudget({
      workspaceRef: "default",
      interval: "daily",
      upsertWorkspaceBudgetRequest: { limitUsd: 5 },
    });
    const got = await sdk.workspaces.getBudget({ workspaceRef: "default", interval: "daily" });
    expect(got.data).toMatchObject({ limitUsd: 5, resetInterval: "daily" });
    expect(got.includeByokInBudgets).toBe(true);

    const all = await sdk.workspaces.listBudgets({ workspaceRef: "default" });
    expect(all.data.map((b) => b.resetInterval)).toEqual(["daily", null]);

    expect(await sdk.workspaces.deleteBudget({ workspaceRef: "default", interval: "daily" })).toEqual({
      deleted: true,
    });
    expect(await sdk.workspaces.deleteBudget({ workspaceRef: "default", interval: "daily" })).toEqual({
      deleted: true,
    });
    await expect(
      sdk.workspaces.getBudget({ workspaceRef: "default", interval: "daily" }),
    ).rejects.toBeInstanceOf(errors.NotFoundResponseError);
  });

  it("maps budget errors to the SDK's classes", async () => {
    const sdk = s.sdk();
    const bad = await sdk.workspaces
      .setBudget({
        workspaceRef: "default",
        interval: "yearly" as "daily",
        upsertWorkspaceBudgetRequest: { limitUsd: 5 },
      })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(errors.BadRequestResponseError);
    expect((bad as Error).message).toBe("interval: must be one of daily, weekly, monthly, lifetime");

    await sdk.workspaces.setBudget({
      workspaceRef: "default",
      interval: "weekly",
      upsertWorkspaceBudgetRequest: { limitUsd: 50 },
    });
    const order = await sdk.workspaces
      .setBudget({
        workspaceRef: "default",
        interval: "monthly",
        upsertWorkspaceBudgetRequest: { limitUsd: 40 },
      })
      .catch((e: unknown) => e);
    expect(order).toBeInstanceOf(errors.BadRequestResponseError);
    expect((order as Error).message).toContain("the weekly budget (50 USD)");

    await expect(
      sdk.workspaces.setBudget({
        workspaceRef: "no-such-workspace",
        interval: "daily",
        upsertWorkspaceBudgetRequest: { limitUsd: 1 },
      }),
    ).rejects.toBeInstanceOf(errors.NotFoundResponseError);
  });
});
