import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  isPlaceholder,
  placeholderOf,
  placeholderText,
  type PartPlaceholder,
} from "../../src/broadcast/content-placeholders.js";
import { capContent, capText, jsonBytes, jsonPrefixLength } from "../../src/broadcast/context-cap.js";
import { storedContent } from "../../src/broadcast/stored-content.js";
import { viewOf } from "../../src/broadcast/encoders/generation-view.js";
import type { BroadcastGeneration, BroadcastMessage } from "../../src/broadcast/encoders/encoder.js";
import { dataUrl, pngBytes } from "../helpers/images.js";

const MiB = 1024 * 1024;
const CAP = 256 * 1024;
const png5 = pngBytes(640, 480, 5 * MiB);
const b64 = (n: number) => Buffer.alloc(n, 7).toString("base64");

describe("placeholders for binary parts", () => {
  it("names each part's kind, media type and decoded size, never its bytes", () => {
    const cases: [Record<string, unknown>, PartPlaceholder][] = [
      [
        { type: "image_url", image_url: { url: dataUrl("image/png", png5), detail: "high" } },
        { type: "image", media_type: "image/png", bytes: 5 * MiB },
      ],
      [
        { type: "input_audio", input_audio: { data: b64(3000), format: "wav" } },
        { type: "audio", media_type: "audio/wav", bytes: 3000 },
      ],
      [
        {
          type: "file",
          file: { filename: "a.pdf", file_data: dataUrl("application/pdf", Buffer.alloc(1234)) },
        },
        { type: "file", media_type: "application/pdf", bytes: 1234 },
      ],
      [
        { type: "input_file", filename: "b.pdf", file_data: dataUrl("application/pdf", Buffer.alloc(10)) },
        { type: "file", media_type: "application/pdf", bytes: 10 },
      ],
      [
        { type: "image", source: { type: "base64", media_type: "image/jpeg", data: b64(999) } },
        { type: "image", media_type: "image/jpeg", bytes: 999 },
      ],
      [
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: b64(4096) } },
        { type: "document", media_type: "application/pdf", bytes: 4096 },
      ],
      [
        { type: "video_url", video_url: { url: dataUrl("video/mp4", Buffer.alloc(2048)) } },
        { type: "video", media_type: "video/mp4", bytes: 2048 },
      ],
    ];
    for (const [part, expected] of cases) {
      const p = placeholderOf(part);
      expect(p, JSON.stringify(part).slice(0, 80)).toEqual(expected);
      expect(isPlaceholder(p)).toBe(true);
      expect(JSON.stringify(p).length).toBeLessThan(120);
    }
    expect(placeholderText(placeholderOf(cases[0]![0]))).toBe("[image image/png 5.0 MiB]");
  });

  it("a remote URL keeps scheme, host and path when short; its query (signatures) never", () => {
    const signed = placeholderOf({
      type: "image_url",
      image_url: { url: "https://user:pw@127.0.0.1:9/cats/1.png?X-Amz-Signature=secret#x" },
    });
    expect(signed).toEqual({
      type: "image",
      media_type: null,
      bytes: null,
      url: "https://127.0.0.1:9/cats/1.png",
    });
    expect(placeholderText(signed)).toBe("[image https://127.0.0.1:9/cats/1.png]");
    const long = placeholderOf({
      type: "image_url",
      image_url: { url: `https://127.0.0.1/${"a".repeat(300)}` },
    });
    expect(long).toEqual({ type: "image", media_type: null, bytes: null });
  });

  it("a part as a client sent it is never taken for a placeholder", () => {
    expect(isPlaceholder({ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } })).toBe(
      false,
    );
    expect(
      isPlaceholder({ type: "image", source: { type: "base64", data: "AAAA" }, bytes: 3, media_type: null }),
    ).toBe(false);
  });
});

describe("stored content: text only", () => {
  it("keeps text and replaces every binary part, and an assistant's images, by a placeholder", () => {
    const messages = [
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?", cache_control: { type: "ephemeral" } },
          { type: "image_url", image_url: { url: dataUrl("image/png", png5) } },
        ],
      },
      {
        role: "assistant",
        content: null,
        images: [{ type: "image_url", image_url: { url: dataUrl("image/png", pngBytes(8, 8, MiB)) } }],
        tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
        extra: "x".repeat(MiB),
      },
    ];
    const { input, output } = storedContent(messages, "A cat.", CAP);
    expect(output).toBe("A cat.");
    expect(input).toEqual([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image", media_type: "image/png", bytes: 5 * MiB },
        ],
      },
      {
        role: "assistant",
        content: null,
        images: [{ type: "image", media_type: "image/png", bytes: MiB }],
        tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
      },
    ]);
    expect(jsonBytes(input)).toBeLessThan(1024);
  });

  it("destinations get each placeholder as a text part that names it", () => {
    const { input, output } = storedContent(
      [
        {
          role: "user",
          content: [
            { type: "text", text: "Look" },
            { type: "image_url", image_url: { url: dataUrl("image/png", png5) } },
          ],
        },
      ],
      "ok",
      CAP,
    );
    const view = viewOf({
      id: "gen-1",
      createdAtMs: 0,
      trace: null,
      attempts: [],
      content: { input, output },
    } as unknown as BroadcastGeneration);
    expect(view.input).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "text", text: "[image image/png 5.0 MiB]" },
        ],
      },
    ]);
  });
});

describe("the cap on what one generation keeps", () => {
  it("cuts by JSON bytes, never inside a character", () => {
    // "é" is 2 bytes, "😀" 4 (a surrogate pair), '"' 2 once escaped
    expect(jsonPrefixLength("aé😀b", 1)).toBe(1);
    expect(jsonPrefixLength("aé😀b", 3)).toBe(2);
    expect(jsonPrefixLength("aé😀b", 6)).toBe(2); // not half of the pair
    expect(jsonPrefixLength("aé😀b", 7)).toBe(4);
    expect(jsonPrefixLength('a"b', 2)).toBe(1);
    const text = "😀".repeat(100_000);
    const cut = capText(text, 10_000);
    expect(jsonBytes(cut)).toBeLessThanOrEqual(10_000);
    expect(cut.isWellFormed()).toBe(true);
    expect(cut).toMatch(/\n\[truncated by Gatehouse: [\d.]+ KiB not kept\]$/);
  });

  it("any prompt and completion stay within any cap, as well-formed text", () => {
    const text = fc.string({
      unit: fc.oneof(
        fc.constant("😀"),
        fc.constant('"'),
        fc.constant("\u0001"),
        fc.string({ unit: "binary", maxLength: 1 }),
      ),
      maxLength: 3000,
    });
    fc.assert(
      fc.property(
        fc.array(fc.record({ role: fc.constantFrom("user", "assistant"), content: text }), { maxLength: 8 }),
        fc.option(text, { nil: null }),
        fc.integer({ min: 4096, max: 12_000 }),
        (input, output, cap) => {
          const capped = capContent(input, output, cap);
          expect(
            jsonBytes(capped.input) + (capped.output === null ? 0 : jsonBytes(capped.output)),
          ).toBeLessThanOrEqual(cap);
          for (const m of capped.input) expect((m.content as string).isWellFormed()).toBe(true);
          expect(capped.output?.isWellFormed() ?? true).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("bounds prompt and completion together, each cut with a marker", () => {
    const input: BroadcastMessage[] = [
      { role: "system", content: "s".repeat(100) },
      { role: "user", content: [{ type: "text", text: "é".repeat(MiB) }], name: "alice" },
      { role: "assistant", content: "later" },
      { role: "user", content: "last" },
    ];
    const capped = capContent(input, "o".repeat(MiB), CAP);
    expect(jsonBytes(capped.input) + jsonBytes(capped.output)).toBeLessThanOrEqual(CAP);
    expect(capped.input).toHaveLength(2);
    expect(capped.input[0]).toEqual(input[0]);
    expect(capped.input[1]!.role).toBe("user");
    expect(capped.input[1]!.name).toBe("alice");
    expect(capped.input[1]!.content).toMatch(
      /^é+\n\[truncated by Gatehouse: [\d.]+ MiB and 2 more messages not kept\]$/,
    );
    expect(capped.output).toMatch(/^o+\n\[truncated by Gatehouse: [\d.]+ KiB not kept\]$/);
    // a short completion is kept whole, and the prompt takes the rest
    const short = capContent(input, "fine", CAP);
    expect(short.output).toBe("fine");
    expect(jsonBytes(short.input)).toBeGreaterThan(CAP - 300);
    expect(jsonBytes(short.input) + jsonBytes("fine")).toBeLessThanOrEqual(CAP);
    // within the cap nothing changes
    expect(capContent(input.slice(2), "fine", CAP)).toEqual({ input: input.slice(2), output: "fine" });
  });
});
