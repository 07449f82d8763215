/**
 * What stored telemetry keeps of a binary content part (an image, audio, a file, a video, a
 * document): never its bytes, a placeholder that names its kind, its media type and its size in
 * bytes (docs/broadcast.md "What is stored"). A remote URL is kept only as its scheme, host and
 * path, and only when that is short: a query string often carries a signature or a token.
 */
export interface PartPlaceholder {
  /** image, audio, file, document, video; for a part type Gatehouse does not know, its own type. */
  type: string;
  media_type: string | null;
  /** Decoded size (base64 counted as the bytes it encodes); null when the part holds only a URL. */
  bytes: number | null;
  url?: string;
}

/** Longest remote URL a placeholder keeps (scheme, host and path). */
export const MAX_PLACEHOLDER_URL = 256;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The kind each known part type carries. */
const KIND: Readonly<Record<string, string>> = {
  image_url: "image",
  input_image: "image",
  image: "image",
  input_audio: "audio",
  audio: "audio",
  file: "file",
  input_file: "file",
  document: "document",
  video_url: "video",
  input_video: "video",
};

const MEDIA_TYPE = /^[a-z0-9][\w.+-]{0,63}\/[\w.+-]{1,64}$/;
const mediaType = (v: unknown): string | null =>
  typeof v === "string" && MEDIA_TYPE.test(v.toLowerCase()) ? v.toLowerCase() : null;

/** Bytes a base64 text encodes (padding and line breaks aside). */
export function base64Bytes(data: string, from = 0): number {
  let end = data.length;
  while (end > from && (data.charCodeAt(end - 1) === 0x3d || data.charCodeAt(end - 1) <= 0x20)) end--;
  return Math.floor(((end - from) * 3) / 4);
}

/** What a placeholder says of one payload: a data URL, a remote URL, or base64 (or other) text. */
function describe(payload: string, hint: string | null): Omit<PartPlaceholder, "type"> {
  if (payload.startsWith("data:")) {
    const comma = payload.indexOf(",");
    const head = comma < 0 ? "" : payload.slice(5, Math.min(comma, 200));
    const base64 = head.endsWith(";base64");
    return {
      media_type: mediaType(head.split(";")[0]) ?? hint,
      bytes:
        comma < 0
          ? Buffer.byteLength(payload)
          : base64
            ? base64Bytes(payload, comma + 1)
            : payload.length - comma - 1,
    };
  }
  if (/^https?:\/\//i.test(payload)) {
    const url = shortUrl(payload);
    return { media_type: hint, bytes: null, ...(url !== null ? { url } : {}) };
  }
  return {
    media_type: hint,
    bytes: /^[A-Za-z0-9+/=\s]*$/.test(payload) ? base64Bytes(payload) : Buffer.byteLength(payload),
  };
}

/** Scheme, host and path of an http(s) URL (no credentials, query or fragment), when short. */
function shortUrl(raw: string): string | null {
  if (raw.length > 8192) return null;
  try {
    const u = new URL(raw);
    const kept = `${u.protocol}//${u.host}${u.pathname}`;
    return kept.length <= MAX_PLACEHOLDER_URL ? kept : null;
  } catch {
    return null;
  }
}

/** The first string among an object's fields, in the order given. */
function firstString(o: unknown, fields: readonly string[]): string | null {
  if (typeof o === "string") return o;
  if (!isObject(o)) return null;
  for (const f of fields) if (typeof o[f] === "string") return o[f];
  return null;
}

const PAYLOAD_FIELDS = ["url", "data", "file_data", "image_url", "file_url", "video_url"] as const;

/** The placeholder of a non-text content part (`{type: "text"}` parts are kept as they are). */
export function placeholderOf(part: Json): PartPlaceholder {
  const own = typeof part.type === "string" ? part.type : "";
  const kind = KIND[own] ?? (/^[\w.-]{1,64}$/.test(own) ? own : "unknown");
  // The part's payload: under a field named for its type (`image_url: {url}`, `input_audio:
  // {data, format}`, `file: {file_data}`), an Anthropic `source`, or the part itself.
  const inner = part[own] ?? part.source ?? part;
  const payload = firstString(inner, PAYLOAD_FIELDS) ?? firstString(part, PAYLOAD_FIELDS);
  const format = isObject(inner) && typeof inner.format === "string" ? inner.format : null;
  const hint =
    mediaType(isObject(inner) ? inner.media_type : undefined) ??
    (format !== null && /^[a-z0-9]{1,16}$/i.test(format) ? `${kind}/${format.toLowerCase()}` : null);
  if (payload === null)
    return { type: kind, media_type: hint, bytes: Buffer.byteLength(JSON.stringify(part)) };
  return { type: kind, ...describe(payload, hint) };
}

const PLACEHOLDER_FIELDS = new Set(["type", "media_type", "bytes", "url"]);

/** Whether a stored part is a placeholder (a part as a client sent it has other fields). */
export function isPlaceholder(part: unknown): part is PartPlaceholder {
  if (!isObject(part) || typeof part.type !== "string") return false;
  if (!(typeof part.bytes === "number" || part.bytes === null)) return false;
  if (!(typeof part.media_type === "string" || part.media_type === null)) return false;
  return Object.keys(part).every((k) => PLACEHOLDER_FIELDS.has(k));
}

/** A size for people: 512 B, 4.0 KiB, 5.0 MiB. */
export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A placeholder as text, as destinations receive it: `[image image/png 5.0 MiB]`. */
export function placeholderText(p: PartPlaceholder): string {
  const words = [p.type];
  if (p.media_type !== null) words.push(p.media_type);
  if (p.bytes !== null) words.push(humanBytes(p.bytes));
  if (p.url !== undefined) words.push(p.url);
  return `[${words.join(" ")}]`;
}
