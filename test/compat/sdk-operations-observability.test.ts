import type { OpenRouter } from "@openrouter/sdk";
import { CreateObservabilityDestinationRequestType } from "@openrouter/sdk/models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { SAMPLE_CONFIGS, secretsOf } from "../http/destinations-fixtures.js";

/** The SDK's own list of destination types, not the server's: the suite covers what clients send. */
const SDK_TYPES = Object.values(CreateObservabilityDestinationRequestType);

interface KnownDestination {
  id: string;
  type: string;
  name: string | null;
  workspaceId: string;
  config: Record<string, unknown>;
  isUnknown?: boolean;
  raw?: unknown;
}

/** A destination the SDK recognised; an UNKNOWN one (bad shape, silently accepted) fails here. */
function known(d: unknown, label: string): KnownDestination {
  const dest = d as KnownDestination;
  expect(dest.isUnknown, `${label}: parsed as UNKNOWN, raw ${JSON.stringify(dest.raw)}`).toBeUndefined();
  expect(dest.type, label).not.toBe("UNKNOWN");
  return dest;
}

/**
 * Wire compatibility, success side: every observability destination operation through
 * @openrouter/sdk 1.3.19, for each of the 17 types. The SDK never throws on a malformed destination
 * (it returns `isUnknown`), so every parsed destination is checked to be a known variant.
 */
describe("SDK 1.3.19: observability destinations", () => {
  let s: ListeningApp;
  let sdk: OpenRouter;
  let keyHash: string;
  const ids = new Map<string, string>();
  beforeAll(async () => {
    s = await startListening();
    sdk = s.sdkWithRaw();
    keyHash = (await sdk.apiKeys.create({ requestBody: { name: "traffic" } })).data.hash;
  });
  afterAll(() => s.close());

  it("the SDK knows 17 destination types", () => {
    expect(SDK_TYPES).toHaveLength(17);
  });

  it.each(SDK_TYPES)("create %s with every field set, read it back with get", async (type) => {
    const created = await sdk.observability.create({
      createObservabilityDestinationRequest: {
        name: `${type} compat`,
        type,
        config: SAMPLE_CONFIGS[type],
        enabled: false,
        privacyMode: true,
        broadcastGenerationCost: true,
        broadcastGenerationIdentity: true,
        broadcastGenerationRequestContext: true,
        samplingRate: 0.5,
        apiKeyHashes: [keyHash],
        filterRules: {
          enabled: true,
          groups: [
            {
              logic: "or",
              rules: [
                { field: "model", operator: "starts_with", value: "openai/" },
                { field: "total_cost", operator: "gt", value: 0.01 },
                { field: "user_id", operator: "exists" },
              ],
            },
          ],
        },
        regions: ["eu", "us"],
      },
    });
    const raw = JSON.stringify(s.lastRaw());
    for (const secret of secretsOf(type, SAMPLE_CONFIGS[type])) {
      expect(raw, `${type}: a secret is returned in clear`).not.toContain(secret);
    }
    const dest = known(created.data, `create ${type}`);
    expect(created.data).toMatchObject({
      type,
      name: `${type} compat`,
      workspaceId: s.workspaceId,
      enabled: false,
      privacyMode: true,
      broadcastGenerationCost: true,
      broadcastGenerationIdentity: true,
      broadcastGenerationRequestContext: true,
      samplingRate: 0.5,
      apiKeyHashes: [keyHash],
      filterRules: {
        enabled: true,
        groups: [
          {
            logic: "or",
            rules: [
              { field: "model", operator: "starts_with", value: "openai/" },
              { field: "total_cost", operator: "gt", value: 0.01 },
              { field: "user_id", operator: "exists" },
            ],
          },
        ],
      },
      regions: ["europe", "us"],
      createdAt: "2026-11-18T12:00:00.000Z",
      updatedAt: "2026-11-18T12:00:00.000Z",
    });
    expect(dest.id).toMatch(/^[0-9a-f-]{36}$/);
    ids.set(type, dest.id);

    const got = await sdk.observability.get({ id: dest.id });
    known(got.data, `get ${type}`);
    expect(got.data).toEqual(created.data);
  });

  it("a minimal create (explicit nulls) gets the defaults: enabled, all keys, no filter, global, sampling 1", async () => {
    const created = await sdk.observability.create({
      createObservabilityDestinationRequest: {
        name: "minimal",
        type: "webhook",
        config: { url: "https://hooks.example.com/minimal" },
        apiKeyHashes: null,
        filterRules: null,
      },
    });
    known(created.data, "minimal");
    expect(created.data).toMatchObject({
      enabled: true,
      privacyMode: false,
      broadcastGenerationCost: false,
      samplingRate: 1,
      apiKeyHashes: null,
      filterRules: null,
      regions: ["global"],
      config: { url: "https://hooks.example.com/minimal", method: "POST" },
    });
    // The SDK fills a filter group's logic and the config's enabled flag; the server keeps them.
    const filtered = await sdk.observability.update({
      id: (created.data as KnownDestination).id,
      updateObservabilityDestinationRequest: {
        filterRules: { groups: [{ rules: [{ field: "total_tokens", operator: "lte", value: 5 }] }] },
      },
    });
    expect(known(filtered.data, "filtered")).toMatchObject({
      filterRules: {
        enabled: true,
        groups: [{ logic: "and", rules: [{ field: "total_tokens", operator: "lte", value: 5 }] }],
      },
    });
    expect(await sdk.observability.delete({ id: (created.data as KnownDestination).id })).toEqual({
      deleted: true,
    });
  });

  it.each(SDK_TYPES)(
    "update %s: echoing the masked config back keeps it; other fields change",
    async (type) => {
      const id = ids.get(type)!;
      const before = known((await sdk.observability.get({ id })).data, `get ${type}`);
      s.clock.advance(1000);
      const updated = await sdk.observability.update({
        id,
        updateObservabilityDestinationRequest: {
          name: `${type} renamed`,
          config: before.config,
          enabled: true,
          samplingRate: 1,
          apiKeyHashes: null,
          filterRules: null,
          regions: ["global"],
        },
      });
      known(updated.data, `update ${type}`);
      expect(updated.data).toMatchObject({
        id,
        type,
        name: `${type} renamed`,
        config: before.config,
        enabled: true,
        samplingRate: 1,
        apiKeyHashes: null,
        filterRules: null,
        regions: ["global"],
        privacyMode: true,
      });
      expect((updated.data as { updatedAt: string }).updatedAt).toBe(s.clock.now().toISOString());
    },
  );

  it("list is a PageIterator over all 17, every item a known variant", async () => {
    const first = await sdk.observability.list({ limit: 5 });
    expect(first.result.totalCount).toBe(17);
    expect(first.result.data).toHaveLength(5);
    const sizes: number[] = [];
    const seen: string[] = [];
    for await (const page of first) {
      expect(page.result.totalCount).toBe(17);
      sizes.push(page.result.data.length);
      for (const d of page.result.data) seen.push(known(d, "list").id);
    }
    expect(sizes).toEqual([5, 5, 5, 2]);
    expect(seen.sort()).toEqual([...ids.values()].sort());

    const all = await sdk.observability.list({ offset: null });
    expect(all.result.data.map((d) => known(d, "list").type).sort()).toEqual([...SDK_TYPES].sort());
    const scoped = await sdk.observability.list({ workspaceId: s.workspaceId, offset: 15, limit: 50 });
    expect(scoped.result.data).toHaveLength(2);
    expect(scoped.result.totalCount).toBe(17);
  });

  it("a destination in another workspace is listed there only", async () => {
    const ws = (await sdk.workspaces.create({ createWorkspaceRequest: { name: "Obs", slug: "obs" } })).data;
    const created = await sdk.observability.create({
      createObservabilityDestinationRequest: {
        name: "elsewhere",
        type: "posthog",
        config: SAMPLE_CONFIGS.posthog,
        workspaceId: ws.id,
      },
    });
    expect(known(created.data, "elsewhere").workspaceId).toBe(ws.id);
    const there = await sdk.observability.list({ workspaceId: ws.id });
    expect(there.result.totalCount).toBe(1);
    expect(there.result.data.map((d) => known(d, "there").name)).toEqual(["elsewhere"]);
  });

  it("delete every type: {deleted: true}, then gone from the list", async () => {
    for (const [type, id] of ids) {
      const deleted = await sdk.observability.delete({ id });
      expect(deleted, type).toEqual({ deleted: true });
      expect(deleted.deleted).toBe(true);
    }
    expect((await sdk.observability.list()).result.totalCount).toBe(0);
  });
});
