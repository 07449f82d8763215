import { describe, expect, it } from "vitest";
import { ChunkEncoder, sse, type ChunkHead } from "../../src/gateway/chat/wire.js";
import type { ProviderChunk } from "../../src/gateway/providers/provider.js";

/**
 * The stream's chunk encoder (src/gateway/chat/wire.ts) writes the repeated head once per stream:
 * every event must still be exactly the SSE encoding of the whole chunk object, in the field
 * order the SDK and the hosted original use, with the deltas cleaned (no nulls, no role but
 * "assistant"), whatever the head's strings hold.
 */
describe("ChunkEncoder", () => {
  const heads: ChunkHead[] = [
    {
      id: "gen-1795773012453-EI7-2UtZb4uaH_fJTwU6wUIa",
      created: 1795773012,
      model: "bench/tiny",
      provider: "Bench",
    },
    // Characters JSON must escape, in every string of the head.
    { id: 'gen-"quoted"\\', created: 0, model: "local/tiny\n", provider: "Prov\u2028ider é" },
  ];
  const chunks: ProviderChunk[] = [
    {
      upstreamId: null,
      usage: null,
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
    },
    {
      upstreamId: "u",
      usage: null,
      choices: [{ index: 0, delta: { content: 'say "hi"\n', role: null }, finish_reason: null }],
    },
    {
      upstreamId: null,
      usage: null,
      choices: [
        {
          index: 0,
          delta: { role: "user", tool_calls: [{ id: "t" }], refusal: null },
          finish_reason: "tool_calls",
        },
        { index: 1, delta: {}, finish_reason: "stop" },
      ],
    },
  ];

  it("a content chunk: the bytes of the whole chunk object, deltas cleaned", () => {
    for (const h of heads) {
      const encode = new ChunkEncoder(h);
      for (const c of chunks) {
        const expected = sse({
          id: h.id,
          provider: h.provider,
          model: h.model,
          object: "chat.completion.chunk",
          created: h.created,
          choices: c.choices.map((ch) => ({
            index: ch.index,
            delta: Object.fromEntries(
              Object.entries(ch.delta).filter(([k, v]) => v !== null && (k !== "role" || v === "assistant")),
            ),
            finish_reason: ch.finish_reason,
          })),
        });
        const text = encode.content(c);
        expect(text).toBe(expected);
        expect(text.endsWith("\n\n")).toBe(true);
        // One event that parses back to the chunk, head first.
        const parsed = JSON.parse(text.slice("data: ".length)) as Record<string, unknown>;
        expect(Object.keys(parsed)).toEqual(["id", "provider", "model", "object", "created", "choices"]);
        expect(parsed.id).toBe(h.id);
        expect(parsed.model).toBe(h.model);
      }
    }
  });

  it("the usage chunk: choices empty, then usage", () => {
    const usage = {
      prompt_tokens: 12,
      completion_tokens: 6,
      total_tokens: 18,
      cost: 0.000024,
      is_byok: false,
    };
    for (const h of heads) {
      const text = new ChunkEncoder(h).usage(usage);
      expect(text).toBe(
        sse({
          id: h.id,
          provider: h.provider,
          model: h.model,
          object: "chat.completion.chunk",
          created: h.created,
          choices: [],
          usage,
        }),
      );
    }
  });
});
