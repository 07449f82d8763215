import type { OpenRouter } from "@openrouter/sdk";
import type { BYOKProviderSlug, ChatResult } from "@openrouter/sdk/models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import { leaveStreamAfter } from "../helpers/leave-stream.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * Edge cases of the data plane's read routes and /byok through @openrouter/sdk 1.3.19 against a
 * real listening server (retries off): identifiers no record can have must answer a status the
 * operation maps (404), not one the SDK only knows as OpenRouterDefaultError.
 */
describe("SDK 1.3.19: identifiers that name nothing", () => {
  let s: ListeningApp;
  let admin: OpenRouter;

  beforeAll(async () => {
    s = await startListening();
    admin = s.sdk();
  });
  afterAll(() => s.close());

  it("byok.get, update and delete with an empty id: 404 NotFoundResponseError (get and delete map no 400)", async () => {
    const notFound = { name: "NotFoundResponseError", statusCode: 404 };
    await expect(admin.byok.get({ id: "" })).rejects.toMatchObject(notFound);
    await expect(admin.byok.delete({ id: "" })).rejects.toMatchObject(notFound);
    await expect(admin.byok.update({ id: "", updateBYOKKeyRequest: { name: "x" } })).rejects.toMatchObject(
      notFound,
    );
  });

  it("generations.getGeneration with an empty or overlong id: 404 NotFoundResponseError (no 400 is mapped)", async () => {
    const notFound = { name: "NotFoundResponseError", statusCode: 404, message: "Generation not found" };
    await expect(admin.generations.getGeneration({ id: "" })).rejects.toMatchObject(notFound);
    await expect(admin.generations.getGeneration({ id: "g".repeat(129) })).rejects.toMatchObject(notFound);
    await expect(admin.generations.getGeneration({ id: "g".repeat(128) })).rejects.toMatchObject(notFound);
  });
});

/**
 * Responses with edge-case data parse: paged and filtered model lists, generations that were
 * cancelled, broke after output or had no app, user or session, activity over several days with
 * BYOK rows, and GET /key with a reset window and an expiry.
 */
describe("SDK 1.3.19: read routes with edge-case data", () => {
  let s: ListeningApp;
  let admin: OpenRouter;
  let key: string;

  const newKey = async (body: Record<string, unknown>): Promise<string> => {
    const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: body });
    expect(r.statusCode).toBe(201);
    return r.json<{ key: string }>().key;
  };
  /** The generation's record, once the server has settled it (a cancelled stream settles late). */
  const settled = async (id: string) => {
    for (let i = 0; i < 100; i++) {
      const g = await admin.generations.getGeneration({ id }).catch(() => null);
      if (g) return g.data;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`generation ${id} never recorded`);
  };

  beforeAll(async () => {
    s = await startListening();
    admin = s.sdk();
    key = await newKey({ name: "edges", limit: 2, limit_reset: "daily" });
  });
  afterAll(() => s.close());

  it("models.list and listForUser page one model at a time; filters and an offset past the end give []", async () => {
    const sdk = s.sdk(key);
    const walk = async (first: { result: { data: { id: string }[] } } & AsyncIterable<unknown>) => {
      const ids: string[] = [];
      for await (const page of first) ids.push(...(page as typeof first).result.data.map((m) => m.id));
      return ids;
    };
    expect(await walk(await sdk.models.list({ limit: 1 }))).toEqual(["mock/echo", "mock/unavailable"]);
    expect(await walk(await sdk.models.listForUser({ bearer: key }, { limit: 1 }))).toEqual([
      "mock/echo",
      "mock/unavailable",
    ]);
    const none = await sdk.models.list({ supportedParameters: "tools,temperature", category: "programming" });
    expect(none.result).toEqual({ data: [], links: { next: null }, totalCount: 0 });
    // A limit larger than the catalog is the whole list, for both (listForUser maps no 400).
    expect((await sdk.models.list({ limit: 5000 })).result.data.map((m) => m.id)).toEqual([
      "mock/echo",
      "mock/unavailable",
    ]);
    expect(
      (await sdk.models.listForUser({ bearer: key }, { limit: 2_147_483_647 })).result.data.map((m) => m.id),
    ).toEqual(["mock/echo", "mock/unavailable"]);
    const past = await sdk.models.list({ offset: 1000 });
    expect(past.result.data).toEqual([]);
    expect(past.result.totalCount).toBe(2);
  });

  it("getGeneration: no app, user or session; broken after output; cancelled by the client", async () => {
    const sdk = s.sdk(key);
    const plain = <ChatResult>await sdk.chat.send({
      chatRequest: { model: "mock/echo", messages: [{ role: "user", content: "bare" }], stream: false },
    });
    const g = await settled(plain.id);
    expect(g).toMatchObject({
      appId: null,
      httpReferer: null,
      externalUser: null,
      origin: "",
      isByok: false,
    });
    expect(g.sessionId).toBeUndefined();

    const broken = await fetch(`${s.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "mock/echo",
        stream: true,
        messages: [{ role: "user", content: "a b c d e f g [[mock fail_after=2 chunks=6]]" }],
      }),
    });
    const brokenId = broken.headers.get("x-gatehouse-generation-id")!;
    await broken.text();
    const b = await settled(brokenId);
    expect(b.finishReason).toBe("error");
    expect(b.streamed).toBe(true);
    expect(b.tokensCompletion).toBeGreaterThan(0);

    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    const cancelledId = await leaveStreamAfter(
      s.baseUrl,
      key,
      {
        model: "mock/echo",
        stream: true,
        messages: [{ role: "user", content: `${words} [[mock chunks=40 chunk_delay_ms=25]]` }],
      },
      3,
    );
    const c = await settled(cancelledId);
    expect(c.cancelled).toBe(true);
    expect(c.providerResponses?.length).toBe(1);
  });

  it("getUserActivity over several days with BYOK rows; GET /key with a daily window and an expiry", async () => {
    const own = await newKey({ name: "own provider key", limit: 2, limit_reset: "daily" });
    const byok = await admin.byok.create({
      createBYOKKeyRequest: {
        provider: "mock" as BYOKProviderSlug,
        key: "sk-provider-0123456789abcdef",
        allowedApiKeyHashes: [hashKey(own)],
      },
    });
    const other = await newKey({ name: "platform" });
    const say = (k: string, content: string) =>
      s.sdk(k).chat.send({
        chatRequest: { model: "mock/echo", messages: [{ role: "user", content }], stream: false },
      });
    await say(own, "day one, own key");
    await say(other, "day one, platform");
    s.clock.advance(86_400_000);
    await say(other, "day two");
    s.clock.advance(2 * 86_400_000);
    const act = await admin.analytics.getUserActivity();
    expect(act.data.map((r) => r.date).sort()).toEqual(["2026-11-18", "2026-11-19"]);
    const day1 = act.data.find((r) => r.date === "2026-11-18")!;
    expect(day1.byokUsageInference).toBeGreaterThan(0);
    expect(day1.usage).toBeGreaterThan(0);
    const platform = await admin.analytics.getUserActivity({ apiKeyHash: hashKey(other) });
    expect(platform.data.map((r) => [r.date, r.requests, r.byokUsageInference])).toEqual([
      ["2026-11-19", 1, 0],
      ["2026-11-18", 1, 0],
    ]);
    expect((await admin.analytics.getUserActivity({ apiKeyHash: hashKey(own) })).data).toEqual([
      expect.objectContaining({ date: "2026-11-18", requests: 1, usage: 0 }),
    ]);
    await admin.byok.delete({ id: byok.data.id });

    const meta = (await s.sdk(own).apiKeys.getCurrentKeyMetadata()).data;
    expect(meta).toMatchObject({ limit: 2, limitRemaining: 2, limitReset: "daily", usageDaily: 0 });
    expect(meta.byokUsage).toBeGreaterThan(0);
    const soon = new Date(s.clock.now().getTime() + 60_000).toISOString().replace(/\.\d+Z$/, "Z");
    const expiring = await newKey({ name: "soon", limit: 1, limit_reset: "weekly", expires_at: soon });
    const e = (await s.sdk(expiring).apiKeys.getCurrentKeyMetadata()).data;
    expect(e.expiresAt).toEqual(new Date(soon));
    expect(e.limitRemaining).toBe(1);
    s.clock.advance(61_000);
    await expect(s.sdk(expiring).apiKeys.getCurrentKeyMetadata()).rejects.toMatchObject({
      name: "UnauthorizedResponseError",
      statusCode: 401,
    });
  });
});
