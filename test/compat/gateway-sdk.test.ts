import type { OpenRouter } from "@openrouter/sdk";
import type { ChatResult, ChatStreamChunk } from "@openrouter/sdk/models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * The data plane through @openrouter/sdk 1.3.19 against a real listening server (retries off):
 * chat.send both ways through the built-in mock, models.list, providers.list,
 * generations.getGeneration and the refusals' error classes. Any schema mismatch would throw
 * ResponseValidationError (or a raw ZodError from a stream).
 */
describe("SDK 1.3.19: the gateway", () => {
  let s: ListeningApp;
  let admin: OpenRouter;
  let key: string;
  let other: string;

  const createKey = async (body: Record<string, unknown>): Promise<string> => {
    const r = await fetch(`${s.baseUrl}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(201);
    return ((await r.json()) as { key: string }).key;
  };
  const keyUsage = async (k: string): Promise<number> =>
    (await s.sdk(k).apiKeys.getCurrentKeyMetadata()).data.usage;

  beforeAll(async () => {
    s = await startListening();
    admin = s.sdk();
    key = await createKey({ name: "app", limit: 10 });
    other = await createKey({ name: "other" });
  });
  afterAll(() => s.close());

  it("chat.send without streaming: a ChatResult with gen id, usage and cost; usage grows by exactly that cost", async () => {
    const before = await keyUsage(key);
    const res = <ChatResult>await s.sdk(key).chat.send({
      httpReferer: "https://app.example",
      appTitle: "Example app",
      chatRequest: {
        model: "mock/echo",
        messages: [{ role: "user", content: "Hello gateway" }],
        user: "end-user-7",
        sessionId: "sess-1",
        stream: false,
      },
    });
    expect(res.id).toMatch(/^gen-[A-Za-z0-9_-]+$/);
    expect(res.object).toBe("chat.completion");
    expect(res.model).toBe("mock/echo");
    expect(res.systemFingerprint).toBeNull();
    expect(res.choices[0]?.message.content).toBe("Echo: Hello gateway");
    expect(res.choices[0]?.finishReason).toBe("stop");
    const u = res.usage!;
    expect(u.promptTokens).toBeGreaterThan(0);
    expect(u.completionTokens).toBeGreaterThan(0);
    expect(u.totalTokens).toBe(u.promptTokens + u.completionTokens);
    expect(u.promptTokensDetails?.cachedTokens).toBe(0);
    expect(u.completionTokensDetails?.reasoningTokens).toBe(0);
    expect(u.isByok).toBe(false);
    // mock/echo: 1 USD per million prompt tokens, 2 per million completion tokens.
    expect(u.cost).toBeCloseTo((u.promptTokens * 1 + u.completionTokens * 2) / 1e6, 12);
    const after = await keyUsage(key);
    expect(after - before).toBeCloseTo(u.cost!, 12);

    const g = await s.sdk(key).generations.getGeneration({ id: res.id });
    expect(g.data.id).toBe(res.id);
    expect(g.data.model).toBe("mock/echo");
    expect(g.data.totalCost).toBe(u.cost);
    expect(g.data.tokensPrompt).toBe(u.promptTokens);
    expect(g.data.tokensCompletion).toBe(u.completionTokens);
    expect(g.data.streamed).toBe(false);
    expect(g.data.externalUser).toBe("end-user-7");
    expect(g.data.sessionId).toBe("sess-1");
    expect(g.data.httpReferer).toBe("https://app.example");
    expect(g.data.upstreamId).toMatch(/^mock-/);
    // The organization's management key sees it too; another key of the organization does not.
    expect((await admin.generations.getGeneration({ id: res.id })).data.id).toBe(res.id);
    await expect(s.sdk(other).generations.getGeneration({ id: res.id })).rejects.toMatchObject({
      name: "NotFoundResponseError",
      statusCode: 404,
    });
  });

  it("chat.send streaming: chunks then a usage chunk (choices []), no validation error, usage charged once", async () => {
    const before = await keyUsage(key);
    const stream = <AsyncIterable<ChatStreamChunk>>await s.sdk(key).chat.send({
      chatRequest: {
        model: "mock/echo",
        messages: [{ role: "user", content: "stream these five words please" }],
        stream: true,
      },
    });
    let text = "";
    let chunks = 0;
    let usage: { cost?: number | null; completionTokens: number } | undefined;
    let id = "";
    for await (const c of stream) {
      chunks += 1;
      id = c.id;
      expect(c.object).toBe("chat.completion.chunk");
      for (const ch of c.choices) text += ch.delta.content ?? "";
      if (c.usage) usage = c.usage;
    }
    expect(chunks).toBeGreaterThanOrEqual(3);
    expect(text).toBe("Echo: stream these five words please");
    expect(usage?.cost).toBeGreaterThan(0);
    expect(await keyUsage(key)).toBeCloseTo(before + usage!.cost!, 12);
    const g = await s.sdk(key).generations.getGeneration({ id });
    expect(g.data.streamed).toBe(true);
    expect(g.data.totalCost).toBe(usage!.cost);
  });

  it("models fallback: mock/unavailable fails (503) before any byte, mock/echo answers", async () => {
    const res = <ChatResult>await s.sdk(key).chat.send({
      chatRequest: {
        models: ["mock/unavailable", "mock/echo"],
        messages: [{ role: "user", content: "fallback" }],
        stream: false,
      },
    });
    expect(res.model).toBe("mock/echo");
    const g = await admin.generations.getGeneration({ id: res.id });
    expect(g.data.providerResponses?.map((p) => p.status)).toEqual([503, 200]);
  });

  it("models.list and providers.list parse; the mock is marked", async () => {
    const page = await s.sdk(key).models.list();
    const echo = page.result.data.find((m) => m.id === "mock/echo");
    expect(echo?.pricing.prompt).toBe("0.000001");
    expect(echo?.pricing.completion).toBe("0.000002");
    expect(echo?.contextLength).toBe(8192);
    expect(echo?.topProvider.maxCompletionTokens).toBe(1024);
    const raw = (await (await fetch(`${s.baseUrl}/models`)).json()) as {
      data: { id: string; is_mock: boolean }[];
    };
    expect(raw.data.find((m) => m.id === "mock/echo")?.is_mock).toBe(true);
    const providers = await s.sdk(key).providers.list();
    expect(providers.data.map((p) => p.slug)).toContain("mock");
  });

  it("models.get, models.count, models.listForUser and endpoints.list parse; links.details resolves", async () => {
    const sdk = s.sdk(key);
    const one = await sdk.models.get({ author: "mock", slug: "echo" });
    expect(one.data).toMatchObject({ id: "mock/echo", supportedParameters: ["max_tokens"] });
    const all = (await sdk.models.list()).result;
    expect((await sdk.models.count()).data.count).toBe(all.totalCount);
    expect((await sdk.models.count({ outputModalities: "text" })).data.count).toBe(all.totalCount);
    expect((await sdk.models.count({ outputModalities: "image" })).data.count).toBe(0);
    const mine = (await sdk.models.listForUser({ bearer: key })).result;
    expect(mine.data.map((m) => m.id)).toEqual(all.data.map((m) => m.id));
    const eps = await sdk.endpoints.list({ author: "mock", slug: "echo" });
    expect(eps.data).toMatchObject({ id: "mock/echo", name: "Mock: Echo" });
    expect(eps.data.endpoints).toEqual([
      expect.objectContaining({
        providerName: "Mock",
        tag: "mock",
        modelId: "mock/echo",
        contextLength: 8192,
        maxCompletionTokens: 1024,
        pricing: expect.objectContaining({ prompt: "0.000001", completion: "0.000002" }),
        supportedParameters: ["max_tokens"],
      }),
    ]);
    // Every model's links.details is a route that answers.
    for (const m of all.data) {
      const r = await fetch(`${s.baseUrl.replace(/\/api\/v1$/, "")}${m.links.details}`);
      expect(r.status, m.links.details).toBe(200);
    }
    // Unknown models, a path without /endpoints, and listForUser without a key.
    for (const path of ["/model/mock/nope", "/models/mock/nope/endpoints", "/models/mock/echo"]) {
      const r = await fetch(`${s.baseUrl}${path}`);
      expect(r.status, path).toBe(404);
      expect(((await r.json()) as { error: { code: number } }).error.code).toBe(404);
    }
    expect((await fetch(`${s.baseUrl}/models/user`)).status).toBe(401);
  });

  it("refusals map to the SDK's classes: 402 (max_tokens too large), 403 disabled / management / spent", async () => {
    const small = await createKey({ name: "small", limit: 0.0001 });
    // Worst case of 1,000,000 completion tokens is 2 USD: the key cannot afford it.
    const err402 = await s
      .sdk(small)
      .chat.send({
        chatRequest: {
          model: "mock/echo",
          messages: [{ role: "user", content: "hi" }],
          maxTokens: 1024,
          stream: false,
        },
      })
      .catch((e: unknown) => e);
    expect(err402).toMatchObject({ name: "PaymentRequiredResponseError", statusCode: 402 });
    const body = JSON.parse((err402 as { body: string }).body) as {
      error: { message: string; metadata: Record<string, unknown> };
    };
    expect(body.error.message).toMatch(/requested up to 1024 tokens, can only afford \d+/);
    expect(body.error.metadata).toMatchObject({
      scope: "key",
      interval: "lifetime",
      limit: 0.0001,
      spent: 0,
      reserved: 0,
    });
    // Without max_tokens the hold is capped to what the key has left, and said so.
    const r = await fetch(`${s.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${small}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock/echo", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-gatehouse-max-tokens-capped")).toBe("true");
    expect(Number(r.headers.get("x-gatehouse-max-tokens"))).toBeLessThan(1024);
    expect(Number(r.headers.get("x-gatehouse-overhead-ms"))).toBeGreaterThanOrEqual(0);

    const mgmt = await admin.chat
      .send({
        chatRequest: { model: "mock/echo", messages: [{ role: "user", content: "hi" }], stream: false },
      })
      .catch((e: unknown) => e);
    expect(mgmt).toMatchObject({ name: "ForbiddenResponseError", statusCode: 403 });
    expect((mgmt as Error).message).toMatch(/Management keys cannot make inference requests/);

    await admin.apiKeys.update({ hash: hashKey(other), requestBody: { disabled: true } });
    const disabled = await s
      .sdk(other)
      .chat.send({
        chatRequest: { model: "mock/echo", messages: [{ role: "user", content: "hi" }], stream: false },
      })
      .catch((e: unknown) => e);
    expect(disabled).toMatchObject({ name: "ForbiddenResponseError", statusCode: 403 });

    const bogus = await s
      .sdk("sk-gh-v1-nope")
      .chat.send({
        chatRequest: { model: "mock/echo", messages: [{ role: "user", content: "hi" }], stream: false },
      })
      .catch((e: unknown) => e);
    expect(bogus).toMatchObject({ name: "UnauthorizedResponseError", statusCode: 401 });
  });
});
