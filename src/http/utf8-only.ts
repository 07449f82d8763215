import { isUtf8 } from "node:buffer";
import type { FastifyRequest } from "fastify";
import { DomainError, invalid } from "../domain/errors.js";

/**
 * JSON is UTF-8 (RFC 8259): a body declared in another charset would be decoded wrongly. The 415
 * for such a request, or null.
 */
export function charsetProblem(request: FastifyRequest): DomainError | null {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers["content-type"] ?? "")?.[1];
  if (charset === undefined || /^utf-?8$/i.test(charset)) return null;
  return new DomainError("unsupported_media_type", "Content-Type: charset must be utf-8");
}

const REPLACEMENT = "\uFFFD";

/** The JSON path (`a.b[2].c`) of the first string or property name for which `bad` holds, or null. */
export function findString(value: unknown, bad: (s: string) => boolean, path: string): string | null {
  if (typeof value === "string") return bad(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findString(value[i], bad, `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const at = path === "" ? k : `${path}.${k}`;
      if (bad(k)) return at;
      const found = findString(v, bad, at);
      if (found !== null) return found;
    }
  }
  return null;
}

/** A UTF-16 surrogate that is not half of a high-low pair. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const notWellFormed = (s: string): boolean => LONE_SURROGATE.test(s);

/**
 * Whether JSON text holds a `\uD800`-`\uDFFF` escape that is not half of a high-low pair (a lone
 * surrogate, which no UTF-8 text can carry). Lexical, so that a body without one is never parsed
 * twice: an escape is a `\u` preceded by an even number of backslashes.
 */
export function hasLoneSurrogateEscape(buf: Buffer): boolean {
  const unit = (at: number): number => {
    if (buf[at] !== 0x5c || buf[at + 1] !== 0x75) return -1; // "\u"
    const hex = buf.toString("latin1", at + 2, at + 6);
    return /^[0-9a-fA-F]{4}$/.test(hex) ? parseInt(hex, 16) : -1;
  };
  for (let i = buf.indexOf("\\u"); i >= 0; i = buf.indexOf("\\u", i + 2)) {
    let slashes = 0;
    for (let j = i - 1; j >= 0 && buf[j] === 0x5c; j--) slashes++;
    if (slashes % 2 === 1) continue; // an escaped backslash followed by "u"
    const u = unit(i);
    if (u < 0xd800 || u > 0xdfff) continue;
    if (u >= 0xdc00) return true; // a low surrogate not consumed as the second half of a pair
    const next = unit(i + 6);
    if (next < 0xdc00 || next > 0xdfff) return true;
    i += 6; // the pair's low half
  }
  return false;
}

/**
 * The 400 for a body that is not valid UTF-8 or holds a lone surrogate, naming the field (found by
 * parsing on this error path only): `generations[3].id: is not valid UTF-8`. `records` maps the
 * parsed body to the records to search, with the path prefix of each. Null when the body is fine.
 */
export function utf8Problem(
  buf: Buffer,
  records: (text: string) => { value: unknown; path: string }[],
): DomainError | null {
  const invalidBytes = !isUtf8(buf);
  if (!invalidBytes && !hasLoneSurrogateEscape(buf)) return null;
  const text = buf.toString("utf8");
  const problem = invalidBytes ? "is not valid UTF-8" : "holds a lone surrogate (not valid Unicode text)";
  // Replacement characters mark invalid bytes unless the body already had some of its own.
  const bad = invalidBytes
    ? buf.indexOf(Buffer.from(REPLACEMENT, "utf8")) < 0
      ? (s: string) => s.includes(REPLACEMENT)
      : null
    : notWellFormed;
  if (bad) {
    try {
      for (const r of records(text)) {
        const at = findString(r.value, bad, r.path);
        if (at !== null) return invalid(`${at === "" ? "body" : at}: ${problem}`);
      }
    } catch {
      // Not JSON either: the byte offset below still says where.
    }
  }
  const offset = invalidBytes ? firstInvalidByte(buf) : -1;
  return invalid(`body: ${problem}${offset >= 0 ? ` (at byte ${offset})` : ""}`);
}

/** Offset of the first byte that does not begin a valid UTF-8 sequence, or -1. */
function firstInvalidByte(b: Buffer): number {
  for (let i = 0; i < b.length;) {
    const c = b[i]!;
    const n =
      c < 0x80
        ? 0
        : c >= 0xc2 && c <= 0xdf
          ? 1
          : c >= 0xe0 && c <= 0xef
            ? 2
            : c >= 0xf0 && c <= 0xf4
              ? 3
              : -1;
    if (n < 0 || (n > 0 && !isUtf8(b.subarray(i, i + n + 1)))) return i;
    i += n + 1;
  }
  return -1;
}

/** A parsed management body: one record at the root. */
export const wholeBody = (text: string) => [{ value: JSON.parse(text) as unknown, path: "" }];

/** An NDJSON ingest body: record i (blank lines skipped) is `generations[i]`, as ingest names it. */
export const ndjsonRecords = (text: string) => {
  const out: { value: unknown; path: string }[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const path = `generations[${out.length}]`;
    try {
      out.push({ value: JSON.parse(line) as unknown, path });
    } catch {
      out.push({ value: null, path });
    }
  }
  return out;
};
