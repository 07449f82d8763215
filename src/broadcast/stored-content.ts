import type { BroadcastMessage } from "./encoders/encoder.js";
import { placeholderOf } from "./content-placeholders.js";
import { capContent, type CappedContent } from "./context-cap.js";

/**
 * What the gateway keeps of a served request for Broadcast (the LiveContext's input and output,
 * stored in the outbox until every delivery is done or dead-lettered): text only. Each message
 * keeps its role, name, text content and parts, tool calls, tool call id, reasoning and refusal
 * text; every other content part (an image, audio, a file, a document, a video, any part that is
 * not `{type: "text"}`) and an assistant's `images` and `audio` become placeholders
 * (content-placeholders.ts); then the whole is cut to `maxBytes` (context-cap.ts).
 */
export function storedContent(
  messages: readonly unknown[],
  output: string | null,
  maxBytes: number,
): CappedContent {
  const input: BroadcastMessage[] = [];
  for (const m of messages) {
    const kept = textOnlyMessage(m);
    if (kept !== null) input.push(kept);
  }
  return capContent(input, output, maxBytes);
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function textOnlyPart(part: unknown): Json | null {
  if (!isObject(part)) return null;
  if (part.type === "text" && typeof part.text === "string") return { type: "text", text: part.text };
  return { ...placeholderOf(part) };
}

function textOnlyContent(content: unknown): unknown {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const parts: Json[] = [];
  for (const p of content) {
    const kept = textOnlyPart(p);
    if (kept !== null) parts.push(kept);
  }
  return parts;
}

/** A message as stored for Broadcast; null for what is not a message (the schema admits none). */
export function textOnlyMessage(m: unknown): BroadcastMessage | null {
  if (!isObject(m) || typeof m.role !== "string") return null;
  const out: BroadcastMessage = { role: m.role, content: textOnlyContent(m.content) };
  for (const field of ["name", "tool_call_id", "reasoning", "refusal"]) {
    if (typeof m[field] === "string") out[field] = m[field];
  }
  if (Array.isArray(m.tool_calls)) out.tool_calls = m.tool_calls;
  if (Array.isArray(m.images)) {
    out.images = m.images.filter(isObject).map((p) => ({ ...placeholderOf({ type: "image_url", ...p }) }));
  }
  if (isObject(m.audio)) out.audio = { ...placeholderOf({ type: "audio", audio: m.audio }) };
  return out;
}
