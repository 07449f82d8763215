import { describe, expect, it } from "vitest";
import { countPromptTokens } from "../../src/gateway/tokens/count-tokens.js";
import {
  REMOTE_IMAGE_TOKENS,
  anthropicImageTokens,
  base64ImageSize,
  headerImageSize,
  openAiImageTokens,
} from "../../src/gateway/tokens/image-tokens.js";
import { dataUrl, jpegBytes, pngBytes } from "../helpers/images.js";

const MiB = 1024 * 1024;
const TEXT = { type: "text", text: "What is in this picture?" };
const prompt = (part: Record<string, unknown>) => [{ role: "user", content: [TEXT, part] }];
const imageCost = (part: Record<string, unknown>, rule: "openai" | "anthropic" = "openai") =>
  countPromptTokens(prompt(part), undefined, rule) - countPromptTokens([{ role: "user", content: [TEXT] }]);

describe("image tokens: the providers' documented rules", () => {
  it("OpenAI: fit 2048×2048, shortest side 768, 170 per 512-px tile + 85; low detail 85", () => {
    expect(openAiImageTokens(1024, 1024)).toBe(765);
    expect(openAiImageTokens(2048, 4096)).toBe(1105); // OpenAI's own example
    expect(openAiImageTokens(512, 512)).toBe(255);
    expect(openAiImageTokens(512, 512, true)).toBe(85);
    expect(openAiImageTokens(4000, 4000, true)).toBe(85);
    expect(openAiImageTokens(100, 100)).toBe(255); // never enlarged: one tile
    expect(REMOTE_IMAGE_TOKENS.openai).toBe(1445); // 768×2048: 8 tiles, the most an image costs
  });

  it("Anthropic: width × height / 750 after the long edge is at most 1568 px, ~1,600 at most", () => {
    expect(anthropicImageTokens(1092, 1092)).toBe(1590);
    expect(anthropicImageTokens(200, 200)).toBe(54);
    expect(anthropicImageTokens(1000, 500)).toBe(667);
    expect(anthropicImageTokens(4000, 4000)).toBe(1600);
    expect(REMOTE_IMAGE_TOKENS.anthropic).toBe(1600);
  });

  it("reads the dimensions from the image's own header (PNG, JPEG after 200 KiB of metadata)", () => {
    expect(base64ImageSize(pngBytes(1092, 700, 5 * MiB).toString("base64"))).toEqual({
      width: 1092,
      height: 700,
    });
    const jpeg = jpegBytes(2048, 4096, 200 * 1024, MiB).toString("base64");
    expect(base64ImageSize(jpeg)).toEqual({ width: 2048, height: 4096 });
    expect(base64ImageSize(Buffer.alloc(4096, 1).toString("base64"))).toBeNull();
  });

  it("a prompt's image parts count by their size and the provider's rule, not a flat 765", () => {
    const big = dataUrl("image/png", pngBytes(2048, 4096, 5 * MiB));
    expect(imageCost({ type: "image_url", image_url: { url: big } })).toBe(1105);
    expect(imageCost({ type: "image_url", image_url: { url: big, detail: "auto" } })).toBe(1105);
    expect(imageCost({ type: "image_url", image_url: { url: big, detail: "low" } })).toBe(85);
    const square = dataUrl("image/jpeg", jpegBytes(1092, 1092, 0, 64 * 1024));
    expect(imageCost({ type: "image_url", image_url: { url: square } }, "anthropic")).toBe(1590);
    expect(imageCost({ type: "image_url", image_url: { url: square } }, "openai")).toBe(765);
    // Anthropic's own block shape and the Responses API's input_image count the same way
    const data = pngBytes(1092, 1092, 1000).toString("base64");
    expect(
      imageCost({ type: "image", source: { type: "base64", media_type: "image/png", data } }, "anthropic"),
    ).toBe(1590);
    expect(imageCost({ type: "input_image", image_url: square, detail: "high" })).toBe(765);
  });

  it("a remote image (never fetched) or an unreadable one counts as the rule's largest", () => {
    const remote = { type: "image_url", image_url: { url: "https://127.0.0.1/cat.png" } };
    expect(imageCost(remote)).toBe(REMOTE_IMAGE_TOKENS.openai);
    expect(imageCost(remote, "anthropic")).toBe(REMOTE_IMAGE_TOKENS.anthropic);
    expect(
      imageCost({ type: "image_url", image_url: { url: "https://127.0.0.1/a.png", detail: "low" } }),
    ).toBe(85);
    const garbage = { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } };
    expect(imageCost(garbage)).toBe(REMOTE_IMAGE_TOKENS.openai);
  });

  it("a header cut short is unreadable, whatever the memory after it holds", () => {
    // Three zero bytes (a TGA header's start, cut short) followed, in the same memory, by bytes
    // that would read as a 1024 × 1024 TGA: as a small Buffer from Node's shared pool can be (a
    // CI run once counted such an image 765 tokens, a 1024 × 1024 image's, not the rule's largest).
    const memory = Buffer.alloc(64);
    memory.writeUInt16LE(1024, 12);
    memory.writeUInt16LE(1024, 14);
    expect(headerImageSize(memory.subarray(0, 3))).toBeNull();
    // The same bytes on their own, and a whole header, for contrast.
    expect(headerImageSize(Buffer.alloc(3))).toBeNull();
    expect(headerImageSize(pngBytes(640, 480))).toEqual({ width: 640, height: 480 });
  });
});
