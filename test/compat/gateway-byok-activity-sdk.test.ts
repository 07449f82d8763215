import type { OpenRouter } from "@openrouter/sdk";
import { BYOKProviderSlug, type ChatResult } from "@openrouter/sdk/models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

const SECRET = "sk-provider-secret-0123456789abcdef";
/** The built-in mock's slug: not in the SDK's (open) enum, which passes any string through. */
const MOCK = "mock" as BYOKProviderSlug;

/**
 * byok.* and analytics.getUserActivity through @openrouter/sdk 1.3.19 against a real server, and
 * what a BYOK key changes for a chat completion: BYOK usage, counted into the key's limit only
 * with include_byok_in_limit.
 */
describe("SDK 1.3.19: BYOK and activity", () => {
  let s: ListeningApp;
  let admin: OpenRouter;
  let key: string;

  const createKey = async (body: Record<string, unknown>): Promise<string> => {
    const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: body });
    expect(r.statusCode).toBe(201);
    return r.json<{ key: string }>().key;
  };
  const chat = async (k: string, content: string) => <ChatResult>await s.sdk(k).chat.send({
      chatRequest: { model: "mock/echo", messages: [{ role: "user", content }], stream: false },
    });

  beforeAll(async () => {
    s = await startListening();
    admin = s.sdkWithRaw();
    key = await createKey({ name: "byok user", limit: 5 });
  });
  afterAll(() => s.close());

  it("create (201), get, list, update, delete; the key is masked and never returned", async () => {
    const created = await admin.byok.create({
      createBYOKKeyRequest: {
        provider: MOCK,
        key: SECRET,
        name: "my mock key",
        allowedModels: ["mock/echo"],
      },
    });
    expect(JSON.stringify(s.lastRaw())).not.toContain(SECRET);
    const k = created.data;
    expect(k.provider).toBe("mock");
    expect(k.label).toBe("sk-p...cdef");
    expect(k.allowedModels).toEqual(["mock/echo"]);
    expect(k.workspaceId).toBe(s.workspaceId);
    expect(k.disabled).toBe(false);
    expect((await admin.byok.get({ id: k.id })).data.name).toBe("my mock key");
    const page = await admin.byok.list({});
    expect(page.result.totalCount).toBe(1);
    expect(page.result.data[0]?.id).toBe(k.id);
    const updated = await admin.byok.update({
      id: k.id,
      updateBYOKKeyRequest: { disabled: true, name: "off" },
    });
    expect(updated.data.disabled).toBe(true);
    expect(updated.data.name).toBe("off");
    // Stored encrypted: the secret is nowhere in the row.
    const row = await s.ctx.store.db
      .selectFrom("byok_keys")
      .selectAll()
      .where("id", "=", k.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain(
      SECRET,
    );
    expect((await admin.byok.delete({ id: k.id })).deleted).toBe(true);
    await expect(admin.byok.get({ id: k.id })).rejects.toMatchObject({
      name: "NotFoundResponseError",
      statusCode: 404,
    });
  });

  it("bad input is 400 naming the field", async () => {
    await expect(
      admin.byok.create({
        createBYOKKeyRequest: { provider: "no-such-provider" as BYOKProviderSlug, key: "x" },
      }),
    ).rejects.toMatchObject({ statusCode: 400, message: expect.stringMatching(/^provider:/) });
    await expect(
      admin.byok.create({ createBYOKKeyRequest: { provider: MOCK, key: "x", allowedApiKeyHashes: [] } }),
    ).rejects.toMatchObject({ statusCode: 400, message: expect.stringMatching(/^allowed_api_key_hashes:/) });
    await expect(
      admin.byok.create({
        createBYOKKeyRequest: { provider: MOCK, key: "x", isByokOnly: true, isFallback: true },
      }),
    ).rejects.toMatchObject({ statusCode: 400, message: expect.stringMatching(/^is_byok_only:/) });
  });

  it("every provider slug of the SDK's BYOKProviderSlug is accepted by create, and lists by it", async () => {
    const slugs = Object.values(BYOKProviderSlug);
    expect(slugs).toContain("black-forest-labs");
    const ids: string[] = [];
    for (const provider of slugs) {
      const created = await admin.byok.create({ createBYOKKeyRequest: { provider, key: "sk-slug-0123" } });
      expect(created.data.provider).toBe(provider);
      ids.push(created.data.id);
    }
    const listed = await admin.byok.list({ provider: "black-forest-labs" });
    expect(listed.result.data.map((k) => k.id)).toEqual([ids[slugs.indexOf("black-forest-labs")]]);
    for (const id of ids) expect((await admin.byok.delete({ id })).deleted).toBe(true);
  });

  it("list without workspaceId is the default workspace's keys (the SDK's contract), with it that workspace's", async () => {
    const ws = await admin.workspaces.create({
      createWorkspaceRequest: { name: "Keys elsewhere", slug: "keys-elsewhere" },
    });
    const mine = await admin.byok.create({
      createBYOKKeyRequest: { provider: "openai", key: "sk-default-0123" },
    });
    const elsewhere = await admin.byok.create({
      createBYOKKeyRequest: { provider: "openai", key: "sk-elsewhere-0123", workspaceId: ws.data.id },
    });
    const byDefault = (await admin.byok.list()).result;
    expect(byDefault.data.map((k) => k.id)).toEqual([mine.data.id]);
    expect(byDefault.totalCount).toBe(1);
    const there = (await admin.byok.list({ workspaceId: ws.data.id })).result;
    expect(there.data.map((k) => k.id)).toEqual([elsewhere.data.id]);
    expect(there.totalCount).toBe(1);
    for (const id of [mine.data.id, elsewhere.data.id]) await admin.byok.delete({ id });
  });

  it("a BYOK-served request is BYOK usage: not charged to credits, counted into the limit only when the key says so", async () => {
    const byok = await admin.byok.create({
      createBYOKKeyRequest: { provider: MOCK, key: SECRET, allowedApiKeyHashes: [hashKey(key)] },
    });
    const res = await chat(key, "served with my own key");
    expect(res.usage?.isByok).toBe(true);
    expect(res.usage?.cost).toBe(0);
    const meta = await s.sdk(key).apiKeys.getCurrentKeyMetadata();
    expect(meta.data.usage).toBe(0);
    expect(meta.data.byokUsage).toBeGreaterThan(0);
    expect(meta.data.limitRemaining).toBe(5);
    // include_byok_in_limit: the same BYOK spend now counts toward the limit.
    await admin.apiKeys.update({ hash: hashKey(key), requestBody: { includeByokInLimit: true } });
    const after = await s.sdk(key).apiKeys.getCurrentKeyMetadata();
    expect(after.data.limitRemaining).toBeLessThan(5);
    // Another key of the organization is not in allowed_api_key_hashes: platform credential.
    const other = await createKey({ name: "not allowed" });
    expect((await chat(other, "platform please")).usage?.isByok).toBe(false);
    await admin.byok.delete({ id: byok.data.id });
  });

  it("analytics.getUserActivity: daily rows per model from the analytics engine", async () => {
    const k = await createKey({ name: "activity" });
    const res = await chat(k, "for yesterday's activity");
    // Activity covers completed UTC days: move the clock to the next day.
    s.clock.advance(86_400_000);
    const act = await admin.analytics.getUserActivity({ apiKeyHash: hashKey(k) });
    expect(act.data).toHaveLength(1);
    const row = act.data[0]!;
    expect(row.model).toBe("mock/echo");
    // The provider's display name, as generations.getGeneration shows it (not its slug).
    expect(row.providerName).toBe("Mock");
    expect(row.endpointId).toBe("mock/echo:mock");
    // The key's hash in capitals names the same key.
    const upper = await admin.analytics.getUserActivity({ apiKeyHash: hashKey(k).toUpperCase() });
    expect(upper.data).toEqual(act.data);
    expect(row.requests).toBe(1);
    expect(row.promptTokens).toBe(res.usage!.promptTokens);
    expect(row.completionTokens).toBe(res.usage!.completionTokens);
    expect(row.usage).toBeCloseTo(res.usage!.cost!, 12);
    expect(row.date).toBe("2026-11-18");
    const byWs = await admin.analytics.getUserActivity({ groupBy: "workspace", date: "2026-11-18" });
    expect(byWs.data.length).toBeGreaterThan(0);
    expect(byWs.data.every((r) => r.workspaceId === s.workspaceId)).toBe(true);
    await expect(admin.analytics.getUserActivity({ date: "2020-01-01" })).rejects.toMatchObject({
      statusCode: 400,
      message: expect.stringMatching(/^date:/),
    });
  });
});
