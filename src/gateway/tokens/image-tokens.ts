import { imageSize } from "image-size";

/**
 * Prompt tokens of image parts, by the providers' documented rules (docs/gateway.md "Token
 * counts"). The dimensions come from the image's own header (image-size); an image behind a URL
 * is never fetched to measure it, and counts as the rule's largest image (REMOTE_IMAGE_TOKENS).
 * The upstream's own usage settles the real number whenever it reports one.
 */
export type ImageRule = "openai" | "anthropic";

/** An image part of a prompt: its dimensions when its header tells them (null: unknown). */
export interface PromptImage {
  size: { width: number; height: number } | null;
  /** OpenAI's `detail`: `low` is a flat 85 tokens; `high`, `auto` and `original` are tiled. */
  low: boolean;
}

/** OpenAI: a low-detail image, and each 512-px tile of a high-detail one plus that base. */
export const OPENAI_BASE_TOKENS = 85;
export const OPENAI_TILE_TOKENS = 170;
/** Anthropic: pixels per token, the longest edge it keeps, and the size it scales larger images to. */
export const ANTHROPIC_PIXELS_PER_TOKEN = 750;
export const ANTHROPIC_MAX_EDGE = 1568;
export const ANTHROPIC_MAX_TOKENS = 1600;

/**
 * An image whose dimensions are unknown (a remote URL, or a header that cannot be read): the most
 * a high-detail image can cost under each rule (OpenAI: 768×2048 after scaling, 8 tiles; Anthropic:
 * its ~1,600-token ceiling), so a reservation is never short.
 */
export const REMOTE_IMAGE_TOKENS: Readonly<Record<ImageRule, number>> = {
  openai: OPENAI_BASE_TOKENS + 8 * OPENAI_TILE_TOKENS,
  anthropic: ANTHROPIC_MAX_TOKENS,
};

/**
 * OpenAI (high detail): scaled to fit within 2048×2048, then so that its shortest side is 768 px
 * (never enlarged), then 170 tokens per 512-px tile plus 85. Low detail: 85.
 */
export function openAiImageTokens(width: number, height: number, low = false): number {
  if (low) return OPENAI_BASE_TOKENS;
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shortest = Math.min(1, 768 / Math.min(w, h));
  w = Math.floor(w * shortest);
  h = Math.floor(h * shortest);
  return OPENAI_BASE_TOKENS + OPENAI_TILE_TOKENS * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/**
 * Anthropic: width × height / 750, after scaling the longest edge to at most 1568 px; an image
 * still over about 1,600 tokens is scaled down to that (its documented ceiling).
 */
export function anthropicImageTokens(width: number, height: number): number {
  const fit = Math.min(1, ANTHROPIC_MAX_EDGE / Math.max(width, height));
  const tokens = Math.ceil((Math.round(width * fit) * Math.round(height * fit)) / ANTHROPIC_PIXELS_PER_TOKEN);
  return Math.min(tokens, ANTHROPIC_MAX_TOKENS);
}

export function imageTokens(image: PromptImage, rule: ImageRule): number {
  if (rule === "openai" && image.low) return OPENAI_BASE_TOKENS;
  if (image.size === null) return REMOTE_IMAGE_TOKENS[rule];
  const { width, height } = image.size;
  return rule === "openai" ? openAiImageTokens(width, height) : anthropicImageTokens(width, height);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Base64 characters decoded to find the header: the first 64 Ki are enough for PNG, GIF, WebP and
 * most JPEGs; a JPEG's frame header may follow up to 64 KiB of EXIF (a camera's thumbnail) or more
 * metadata, so then 1 Mi, and only then the whole image (bounded by the body limit).
 */
const HEADER_STEPS = [64 * 1024, 1024 * 1024];

/**
 * Dimensions from an image's header bytes; null when they cannot be read. image-size reads its
 * fields through DataViews over the input's whole ArrayBuffer, so past the input's end when the
 * header is cut short: for a small Buffer, which Node carves out of a shared pool, that is other
 * data of the process (the size of a 3-byte "image" then depended on what the pool held). It reads
 * a copy that owns exactly its memory instead, where a read past the end throws.
 */
export function headerImageSize(bytes: Uint8Array): PromptImage["size"] {
  const own =
    bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
  try {
    const s = imageSize(own);
    return s.width > 0 && s.height > 0 && Number.isFinite(s.width * s.height)
      ? { width: s.width, height: s.height }
      : null;
  } catch {
    return null;
  }
}

/** Dimensions from an image's base64 bytes; null when its header cannot be read. */
export function base64ImageSize(data: string, from = 0): PromptImage["size"] {
  const read = (end: number): PromptImage["size"] =>
    headerImageSize(Buffer.from(data.slice(from, end), "base64"));
  for (const step of HEADER_STEPS) {
    if (data.length <= from + step) break;
    const size = read(from + step);
    if (size !== null) return size;
  }
  return read(data.length);
}

/** A `data:…;base64,` URL's image dimensions; null for any other URL. */
function dataUrlSize(url: string): PromptImage["size"] {
  if (!url.startsWith("data:")) return null;
  const comma = url.indexOf(",");
  if (comma < 0 || !url.slice(0, comma).endsWith(";base64")) return null;
  return base64ImageSize(url, comma + 1);
}

/**
 * The image a content part carries, or null when it is not an image part: OpenAI's `image_url`
 * (a data URL or a remote URL), the Responses API's `input_image`, and Anthropic's `image` with a
 * `base64` or `url` source.
 */
export function promptImageOf(part: Record<string, unknown>): PromptImage | null {
  if (part.type === "image_url" || part.type === "input_image") {
    const ref = part.image_url;
    const url = isObject(ref) ? ref.url : ref;
    const detail = isObject(ref) ? ref.detail : part.detail;
    return { size: typeof url === "string" ? dataUrlSize(url) : null, low: detail === "low" };
  }
  if (part.type === "image") {
    const source = part.source;
    const size =
      isObject(source) && source.type === "base64" && typeof source.data === "string"
        ? base64ImageSize(source.data)
        : null;
    return { size, low: false };
  }
  return null;
}
