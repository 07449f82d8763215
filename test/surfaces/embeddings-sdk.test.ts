import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeEmbeddingTokens } from "../helpers/fake-upstreams/openai.js";
import { startSurfaceRig, type SurfaceRig } from "./surface-fixtures.js";

/**
 * Embeddings through a listening Gatehouse with the official clients: the `openai` package (which
 * asks for base64 by default and decodes it) and the OpenRouter SDK; the built-in mock/embed and an
 * OpenAI-compatible upstream; charged at the prompt price, recorded with api "embeddings".
 */
let rig: SurfaceRig;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  rig = await startSurfaceRig({ embeddingModels: true });
  key = await rig.key("embeddings");
  client = new OpenAI({ apiKey: key, baseURL: rig.s.baseUrl, maxRetries: 0 });
});
afterAll(() => rig?.close());

describe("embeddings with the official clients", () => {
  it("openai: base64 by default, decoded to the upstream's numbers; float when asked", async () => {
    const before = await rig.usage(key);
    const r = await client.embeddings.create({ model: "local/embed", input: ["hello", "a longer text"] });
    expect(r.data.map((d) => Array.from(d.embedding))).toEqual([
      [5, 1, 2, 3],
      [13, 1, 2, 3],
    ]);
    const tokens = fakeEmbeddingTokens("hello") + fakeEmbeddingTokens("a longer text");
    expect(r.usage.prompt_tokens).toBe(tokens);
    const cost = (r.usage as unknown as { cost: number }).cost;
    expect(cost).toBeCloseTo((tokens * 3_100) / 1e9, 12);
    expect((await rig.usage(key)) - before).toBeCloseTo(cost, 12);
    const id = (r as unknown as { id: string }).id;
    expect(await rig.apiOf(id)).toBe("embeddings");
    const f = await client.embeddings.create({
      model: "local/embed",
      input: "hello",
      encoding_format: "float",
    });
    expect(f.data[0]!.embedding).toEqual([5, 1, 2, 3]);
  });

  it("the built-in mock/embed is deterministic; dimensions are honoured", async () => {
    const a = await client.embeddings.create({ model: "mock/embed", input: "same text", dimensions: 16 });
    const b = await client.embeddings.create({ model: "mock/embed", input: "same text", dimensions: 16 });
    expect(a.data[0]!.embedding).toHaveLength(16);
    expect(Array.from(a.data[0]!.embedding)).toEqual(Array.from(b.data[0]!.embedding));
  });

  it("the OpenRouter SDK's embeddings.generate and listModels parse", async () => {
    const sdk = rig.s.sdk(key);
    const r = await sdk.embeddings.generate({ requestBody: { model: "local/embed", input: "hello" } });
    if (typeof r === "string") throw new Error("expected JSON");
    expect(r.data[0]!.embedding).toEqual([5, 1, 2, 3]);
    expect(r.usage?.cost).toBeGreaterThan(0);
    const models = await sdk.embeddings.listModels();
    const ids = models.result.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(["local/embed", "mock/embed"]));
    expect(ids).not.toContain("local/ok");
  });

  it("a chat model is refused for embeddings and an embedding model for chat, each naming model", async () => {
    await expect(client.embeddings.create({ model: "local/ok", input: "x" })).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      client.chat.completions.create({ model: "local/embed", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toThrow(/model/);
  });
});
