import * as errors from "@openrouter/sdk/models/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startListening, type ListeningApp } from "../helpers/server.js";

/** Every key operation through the official SDK 1.3.19 over a real socket. */
describe("API keys through @openrouter/sdk", () => {
  let s: ListeningApp;
  beforeAll(async () => {
    s = await startListening();
  });
  afterAll(() => s.close());

  it("create → list → get → update → delete parse without validation errors", async () => {
    const sdk = s.sdk();
    const created = await sdk.apiKeys.create({
      requestBody: {
        name: "SDK key",
        limit: 25.5,
        limitReset: "monthly",
        includeByokInLimit: true,
        expiresAt: new Date("2027-06-30T23:59:59.000Z"),
        creatorUserId: "user_abc",
        external: { user: "partner-1", apiKey: "ext_0123456789abcdefghijklmnopqrstuvwxyz" },
      },
    });
    expect(created.key).toMatch(/^sk-gh-v1-/);
    expect(created.data).toMatchObject({
      name: "SDK key",
      limit: 25.5,
      limitRemaining: 25.5,
      limitReset: "monthly",
      includeByokInLimit: true,
      creatorUserId: "user_abc",
      externalUser: "partner-1",
      workspaceId: s.workspaceId,
      disabled: false,
      usage: 0,
    });
    expect(created.data.expiresAt).toEqual(new Date("2027-06-30T23:59:59.000Z"));
    const hash = created.data.hash;

    const listed = await sdk.apiKeys.list({ includeDisabled: true, offset: 0, workspaceId: s.workspaceId });
    expect(listed.data.map((k) => k.hash)).toContain(hash);
    expect((await sdk.apiKeys.list()).data.map((k) => k.hash)).toContain(hash);

    const got = await sdk.apiKeys.get({ hash });
    expect(got.data).toEqual(created.data);

    const updated = await sdk.apiKeys.update({
      hash,
      requestBody: {
        name: "Renamed",
        disabled: true,
        limit: null,
        limitReset: null,
        includeByokInLimit: false,
      },
    });
    expect(updated.data).toMatchObject({
      name: "Renamed",
      disabled: true,
      limit: null,
      limitRemaining: null,
      limitReset: null,
      includeByokInLimit: false,
    });
    expect((await sdk.apiKeys.update({ hash, requestBody: {} })).data.name).toBe("Renamed");

    expect(await sdk.apiKeys.delete({ hash })).toEqual({ deleted: true });
    await expect(sdk.apiKeys.get({ hash })).rejects.toBeInstanceOf(errors.NotFoundResponseError);
  });

  it("GET /key parses for management and ordinary keys", async () => {
    const mgmt = await s.sdk().apiKeys.getCurrentKeyMetadata();
    expect(mgmt.data).toMatchObject({
      isManagementKey: true,
      isProvisioningKey: true,
      isFreeTier: false,
      organizationId: s.organizationId,
      workspaceId: s.workspaceId,
      allowedDataRegions: ["global"],
      freeModelDailyRequests: { limit: 0, remaining: 0, used: 0 },
      rateLimit: { requests: -1 },
      expiresAt: null,
    });
    const { key } = await s.sdk().apiKeys.create({
      requestBody: { name: "ordinary", expiresAt: new Date("2027-01-01T00:00:00.000Z") },
    });
    const mine = await s.sdk(key).apiKeys.getCurrentKeyMetadata();
    expect(mine.data).toMatchObject({
      isManagementKey: false,
      expiresAt: new Date("2027-01-01T00:00:00.000Z"),
    });
  });

  it("maps errors to the SDK's typed errors", async () => {
    const sdk = s.sdk();
    await expect(sdk.apiKeys.create({ requestBody: { name: "" } })).rejects.toBeInstanceOf(
      errors.BadRequestResponseError,
    );
    await expect(
      // Enums are open in the SDK: an unknown value reaches the server, which must refuse it.
      sdk.apiKeys.update({ hash: "f".repeat(64), requestBody: { limitReset: "yearly" as "daily" } }),
    ).rejects.toMatchObject({
      statusCode: 400,
      message: "limit_reset: must be one of daily, weekly, monthly",
    });
    await expect(
      sdk.apiKeys.update({ hash: "f".repeat(64), requestBody: { name: "x" } }),
    ).rejects.toBeInstanceOf(errors.NotFoundResponseError);
    await expect(sdk.apiKeys.delete({ hash: "not-a-hash" })).rejects.toBeInstanceOf(
      errors.NotFoundResponseError,
    );
    await expect(s.sdk("sk-gh-v1-nope").apiKeys.list()).rejects.toBeInstanceOf(
      errors.UnauthorizedResponseError,
    );
    const { key } = await sdk.apiKeys.create({ requestBody: { name: "ordinary" } });
    await expect(s.sdk(key).apiKeys.create({ requestBody: { name: "x" } })).rejects.toBeInstanceOf(
      errors.ForbiddenResponseError,
    );
  });
});
