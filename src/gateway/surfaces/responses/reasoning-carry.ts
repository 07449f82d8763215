import { isObject, optArray, optString, refuse, type Json } from "./body-fields.js";

/**
 * Reasoning between the chat shape (`reasoning` text and `reasoning_details`) and Responses
 * `reasoning` items (docs/surfaces/responses.md "Reasoning").
 *
 * Gatehouse keeps nothing between requests, yet a provider may need its reasoning back on the next
 * turn exactly as it gave it (Anthropic refuses a tool-use turn with thinking unless each thinking
 * block comes back with its signature). Codex, like the Responses clients, sends a reasoning item
 * back with only `summary`, `content` and `encrypted_content`, and drops any other field. So an
 * answer's whole `reasoning_details` list travels in `encrypted_content`, the one opaque field
 * every client returns untouched: `gatehouse.reasoning.v1:` and the list as base64url JSON. It is
 * encoded, not encrypted (the provider's own encrypted or signed parts inside it stay as they
 * were); a reasoning item carrying it turns back into that list, as it was.
 */
export const CARRY_PREFIX = "gatehouse.reasoning.v1:";

const TEXT_FIELDS = ["text", "summary", "data"] as const;

/**
 * A stream's reasoning_details arrive in pieces: the pieces of one detail share its `index` and
 * `type` (the text in several, the signature in the last). They are joined into one detail each:
 * text fields appended, any other field the last value given. Details without an index stay as
 * they are. Whole details (a non-streamed answer) pass unchanged.
 */
export class ReasoningDetails {
  private readonly list: Json[] = [];
  private readonly byKey = new Map<string, Json>();

  add(pieces: unknown): void {
    if (!Array.isArray(pieces)) return;
    for (const p of pieces) {
      if (!isObject(p)) continue;
      const key = typeof p.index === "number" ? `${p.index}:${String(p.type)}` : null;
      const seen = key === null ? undefined : this.byKey.get(key);
      if (!seen) {
        const copy = { ...p };
        this.list.push(copy);
        if (key !== null) this.byKey.set(key, copy);
        continue;
      }
      for (const [k, v] of Object.entries(p)) {
        if (v === null || v === undefined) continue;
        const was = seen[k];
        seen[k] =
          (TEXT_FIELDS as readonly string[]).includes(k) && typeof v === "string" && typeof was === "string"
            ? was + v
            : v;
      }
    }
  }

  get details(): readonly Json[] {
    return this.list;
  }
}

/** What a reasoning item shows of a list of details. */
export interface ReasoningView {
  /** The summaries' text (`reasoning.summary`). */
  summary: string;
  /** The reasoning text (`reasoning.text`, or the plain `reasoning` when no detail has text). */
  text: string;
  /** The first detail's format (OpenRouter's reasoning items name it), or null. */
  format: string | null;
  /** The last text detail's signature, or null. */
  signature: string | null;
}

export function viewOf(details: readonly Json[], plain: string | null | undefined): ReasoningView {
  let summary = "";
  let text = "";
  let format: string | null = null;
  let signature: string | null = null;
  for (const d of details) {
    if (format === null && typeof d.format === "string") format = d.format;
    if (d.type === "reasoning.summary" && typeof d.summary === "string") summary += d.summary;
    else if (d.type === "reasoning.text") {
      if (typeof d.text === "string") text += d.text;
      if (typeof d.signature === "string" && d.signature !== "") signature = d.signature;
    }
  }
  if (summary === "" && text === "" && typeof plain === "string") text = plain;
  return { summary, text, format, signature };
}

/** reasoning_details → the `encrypted_content` that carries them (null when there are none). */
export function carryDetails(details: readonly Json[]): string | null {
  if (details.length === 0) return null;
  return CARRY_PREFIX + Buffer.from(JSON.stringify(details)).toString("base64url");
}

function decodeCarried(carried: string, path: string): Json[] {
  let list: unknown;
  try {
    list = JSON.parse(Buffer.from(carried.slice(CARRY_PREFIX.length), "base64url").toString("utf8"));
  } catch {
    throw refuse(path, "is not the reasoning Gatehouse sent (it does not decode)");
  }
  if (!Array.isArray(list) || !list.every(isObject)) {
    throw refuse(path, "is not the reasoning Gatehouse sent (not a list of details)");
  }
  return list;
}

function partsText(parts: unknown[] | undefined, type: string, key: string, path: string): string[] {
  return (parts ?? []).map((p, j) => {
    if (!isObject(p) || p.type !== type || typeof p[key] !== "string") {
      throw refuse(`${path}[${j}]`, `must be {type: "${type}", ${key}: string}`);
    }
    return p[key];
  });
}

/**
 * A reasoning input item → the reasoning_details of the assistant turn it belongs to. One Gatehouse
 * sent carries its details in `encrypted_content` (above), returned as they were. Another (a
 * client's own, or one from another service) becomes: each summary a `reasoning.summary`, the
 * reasoning text a `reasoning.text` (with the item's `signature`, if any), a foreign
 * `encrypted_content` a `reasoning.encrypted` of format "unknown" unless the item names one, so
 * that no provider mistakes it for its own.
 */
export function detailsOfItem(item: Json, path: string): Json[] {
  const encrypted = optString(item, "encrypted_content", `${path}.encrypted_content`);
  if (encrypted?.startsWith(CARRY_PREFIX)) return decodeCarried(encrypted, `${path}.encrypted_content`);
  const format = optString(item, "format", `${path}.format`);
  const signature = optString(item, "signature", `${path}.signature`);
  const f = format !== undefined ? { format } : {};
  const out: Json[] = [];
  const summaries = partsText(
    optArray(item, "summary", `${path}.summary`),
    "summary_text",
    "text",
    `${path}.summary`,
  );
  for (const s of summaries) out.push({ type: "reasoning.summary", summary: s, ...f, index: out.length });
  const texts = partsText(
    optArray(item, "content", `${path}.content`),
    "reasoning_text",
    "text",
    `${path}.content`,
  );
  if (texts.length > 0 || signature !== undefined) {
    out.push({
      type: "reasoning.text",
      text: texts.join(""),
      ...(signature !== undefined ? { signature } : {}),
      ...f,
      index: out.length,
    });
  }
  if (encrypted !== undefined) {
    out.push({
      type: "reasoning.encrypted",
      data: encrypted,
      format: format ?? "unknown",
      index: out.length,
    });
  }
  return out;
}
