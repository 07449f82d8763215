import { CreateEmbeddingsResponseBody$inboundSchema } from "@openrouter/sdk/models/operations";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { base64ToFloat32, float32ToBase64 } from "../../../src/lib/float32-base64.js";
import { embeddingsRequest } from "../../../src/gateway/surfaces/embeddings/embeddings-request.js";
import {
  embeddingsResponse,
  embeddingsUsage,
  type EmbeddingsUsageWire,
} from "../../../src/gateway/surfaces/embeddings/embeddings-response.js";

/** POST /embeddings' answer: numbers or base64 of little-endian float32, and a usage with a cost. */

/** Values chosen so that float32 rounds most of them: 0.1 is not a float32. */
const VECTORS = [
  Float32Array.from([0.1, -0.2, 0.30000001192092896, 1e-8, -3.4e38]),
  Float32Array.from([1, 0, -1, 0.5, 2 ** -20]),
];
const USAGE = embeddingsUsage(
  { promptTokens: 12, costNano: 12_000n, byokCostNano: 0n, isByok: false },
  1_000_000_000n,
);
const opts = (encoding: "float" | "base64", usage: EmbeddingsUsageWire = USAGE) => ({
  model: "mock/embed",
  id: "gen-1",
  encoding,
  usage,
});

/** Little-endian float32 bytes read back independently: a Float32Array over a DataView-checked buffer. */
function decodeLE(text: string): number[] {
  const bytes = Buffer.from(text, "base64");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

describe("embeddingsResponse", () => {
  it("float: each vector as its float32 values, in order, with its index", () => {
    const r = embeddingsResponse(VECTORS, opts("float"));
    expect(r.object).toBe("list");
    expect(r.model).toBe("mock/embed");
    expect(r.id).toBe("gen-1");
    expect(r.data.map((d) => [d.object, d.index])).toEqual([
      ["embedding", 0],
      ["embedding", 1],
    ]);
    expect(r.data[0]!.embedding).toEqual([
      Math.fround(0.1),
      Math.fround(-0.2),
      0.30000001192092896,
      Math.fround(1e-8),
      Math.fround(-3.4e38),
    ]);
    expect(r.data[1]!.embedding).toEqual([1, 0, -1, 0.5, 2 ** -20]);
    // Through JSON, as the client receives it: the same numbers.
    const parsed = JSON.parse(JSON.stringify(r)) as { data: { embedding: number[] }[] };
    expect(Float32Array.from(parsed.data[0]!.embedding)).toEqual(VECTORS[0]);
  });

  it("base64: the little-endian float32 bytes; decoding gives back every value exactly", () => {
    const r = embeddingsResponse(VECTORS, opts("base64"));
    for (const [i, d] of r.data.entries()) {
      expect(typeof d.embedding).toBe("string");
      expect(decodeLE(d.embedding as string)).toEqual(Array.from(VECTORS[i]!));
      // As a client decodes it: a Float32Array over the bytes (little-endian hosts).
      const bytes = Buffer.from(d.embedding as string, "base64");
      expect(new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))).toEqual(
        VECTORS[i],
      );
    }
    // 1.0f is 00 00 80 3f in little-endian order.
    expect(float32ToBase64(Float32Array.from([1]))).toBe(Buffer.from([0, 0, 0x80, 0x3f]).toString("base64"));
  });

  it("base64 round-trips through base64ToFloat32, also from a view at an odd offset; bad base64 is null", () => {
    const backing = new Float32Array(10).map((_, i) => i / 3);
    const view = backing.subarray(3, 7);
    expect(base64ToFloat32(float32ToBase64(view))).toEqual(view);
    expect(base64ToFloat32(float32ToBase64(new Float32Array(0)))).toEqual(new Float32Array(0));
    expect(base64ToFloat32("AAAA!")).toBeNull();
    expect(base64ToFloat32(Buffer.from([1, 2, 3]).toString("base64"))).toBeNull();
  });

  it("both encodings pass the SDK's response schema", () => {
    for (const encoding of ["float", "base64"] as const) {
      const parsed = CreateEmbeddingsResponseBody$inboundSchema.parse(
        embeddingsResponse(VECTORS, opts(encoding)),
      );
      expect(parsed.usage).toMatchObject({
        promptTokens: 12,
        totalTokens: 12,
        cost: 0.000012,
        isByok: false,
      });
      expect(parsed.data).toHaveLength(2);
    }
  });
});

describe("embeddingsUsage", () => {
  it("prompt tokens are the total; cost in USD, never null (0 when free); the prompt's cost at the prompt price", () => {
    expect(USAGE).toEqual({
      prompt_tokens: 12,
      total_tokens: 12,
      cost: 0.000012,
      is_byok: false,
      cost_details: {
        upstream_inference_cost: null,
        upstream_inference_prompt_cost: 0.000012,
        upstream_inference_completions_cost: 0,
      },
    });
    const free = embeddingsUsage({ promptTokens: 5, costNano: 0n, byokCostNano: 0n, isByok: false }, 0n);
    expect(free.cost).toBe(0);
    expect(free.cost_details.upstream_inference_prompt_cost).toBe(0);
  });

  it("BYOK: the provider's charge to the organization's own key is upstream_inference_cost", () => {
    const byok = embeddingsUsage(
      { promptTokens: 1_000, costNano: 500n, byokCostNano: 20_000n, isByok: true },
      20_000_000n,
    );
    expect(byok).toMatchObject({
      cost: 0.0000005,
      is_byok: true,
      cost_details: { upstream_inference_cost: 0.00002, upstream_inference_prompt_cost: 0.00002 },
    });
  });
});

describe("the openai package against these answers", () => {
  /** A fetch that answers as the surface would: the request read by embeddingsRequest, vectors from VECTORS. */
  const fakeFetch = (seen: unknown[]) =>
    (async (_url: RequestInfo | URL, init?: RequestInit) => {
      const body: unknown = JSON.parse(init?.body as string);
      seen.push(body);
      const req = embeddingsRequest(body);
      const answer = embeddingsResponse(VECTORS.slice(0, req.input.length), opts(req.encoding));
      return new Response(JSON.stringify(answer), {
        status: 200,
        headers: { "content-type": "application/json" },
      });
    }) as typeof fetch;

  it("with no encoding_format it asks for base64 and decodes the exact float32 values", async () => {
    const seen: unknown[] = [];
    const client = new OpenAI({
      apiKey: "sk-test",
      baseURL: "http://127.0.0.1:1/api/v1",
      fetch: fakeFetch(seen),
    });
    const res = await client.embeddings.create({ model: "mock/embed", input: ["a", "b"] });
    expect(seen[0]).toMatchObject({ encoding_format: "base64" });
    expect(res.data.map((d) => Array.from(d.embedding))).toEqual(VECTORS.map((v) => Array.from(v)));
    expect(res.usage).toMatchObject({ prompt_tokens: 12, total_tokens: 12 });
  });

  it("with encoding_format float it gets the numbers as they are", async () => {
    const seen: unknown[] = [];
    const client = new OpenAI({
      apiKey: "sk-test",
      baseURL: "http://127.0.0.1:1/api/v1",
      fetch: fakeFetch(seen),
    });
    const res = await client.embeddings.create({ model: "mock/embed", input: "a", encoding_format: "float" });
    expect(seen[0]).toMatchObject({ encoding_format: "float" });
    expect(res.data[0]!.embedding).toEqual(Array.from(VECTORS[0]!));
  });

  it("the trap it guards against: numbers sent where base64 was asked for decode to nothing useful", async () => {
    const numbersAnyway = (async () =>
      new Response(JSON.stringify(embeddingsResponse(VECTORS.slice(0, 1), opts("float"))), {
        status: 200,
        headers: { "content-type": "application/json" },
      })) as typeof fetch;
    const client = new OpenAI({
      apiKey: "sk-test",
      baseURL: "http://127.0.0.1:1/api/v1",
      fetch: numbersAnyway,
    });
    const res = await client.embeddings.create({ model: "mock/embed", input: "a" });
    expect(Array.from(res.data[0]!.embedding)).not.toEqual(Array.from(VECTORS[0]!));
  });
});
