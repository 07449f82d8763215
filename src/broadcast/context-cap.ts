import type { BroadcastMessage } from "./encoders/encoder.js";
import { humanBytes, isPlaceholder, placeholderText } from "./content-placeholders.js";

/**
 * The bound on what one generation keeps for Broadcast (BROADCAST_MAX_CONTEXT_BYTES, measured as
 * the JSON the outbox stores): past it, the prompt and the completion are cut, each where its
 * share ends, never inside a character, and the cut says so in the text itself (a marker the
 * destinations receive). When both are over half, each keeps half; otherwise the smaller keeps all
 * of itself and the other the rest. The prompt is kept from its first message on: the message at
 * the cut keeps its role and the start of its text, the messages after it are left out and counted
 * in the marker.
 */
export interface CappedContent {
  input: BroadcastMessage[];
  output: string | null;
}

/** Bytes held back from a share for the marker (at most ~80 bytes of JSON). */
const MARKER_RESERVE = 128;

export const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? "null");

/**
 * An upper bound of jsonBytes(v) without serializing it (6 bytes a UTF-16 unit, an escape's most),
 * so that the common prompt, far within the cap, costs a walk and no JSON: serializing a 20 KB
 * conversation to measure it took ~75 µs of every request.
 */
function jsonBytesAtMost(v: unknown, depth = 0): number {
  if (typeof v === "string") return v.length * 6 + 2;
  if (typeof v !== "object" || v === null) return 32;
  if (depth > 32) return Infinity;
  let n = 2;
  if (Array.isArray(v)) for (const item of v) n += jsonBytesAtMost(item, depth + 1) + 1;
  else {
    for (const [k, item] of Object.entries(v)) n += k.length * 6 + 4 + jsonBytesAtMost(item, depth + 1);
  }
  return n;
}

/** What a cut text ends with. */
export function truncationMarker(notKeptBytes: number, droppedMessages = 0): string {
  const more = droppedMessages > 0 ? ` and ${droppedMessages} more messages` : "";
  return `\n[truncated by Gatehouse: ${humanBytes(notKeptBytes)}${more} not kept]`;
}

/**
 * The longest prefix of `s` (in UTF-16 units) whose JSON string form, quotes aside, takes at most
 * `maxBytes` bytes of UTF-8, never ending between the two halves of a surrogate pair.
 */
export function jsonPrefixLength(s: string, maxBytes: number): number {
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    let cost: number;
    let units = 1;
    if (c === 0x22 || c === 0x5c) cost = 2;
    else if (c < 0x20) cost = c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
    else if (c < 0x80) cost = 1;
    else if (c < 0x800) cost = 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        cost = 4;
        units = 2;
      } else cost = 6; // a lone surrogate: JSON.stringify writes \udxxx
    } else if (c >= 0xdc00 && c <= 0xdfff) cost = 6;
    else cost = 3;
    if (bytes + cost > maxBytes) break;
    bytes += cost;
    i += units;
  }
  return i;
}

/** `s` within `budget` bytes of JSON (its quotes included), cut with a marker when over. */
export function capText(s: string, budget: number): string {
  const whole = jsonBytes(s);
  if (whole <= budget) return s;
  const n = jsonPrefixLength(s, Math.max(0, budget - MARKER_RESERVE));
  const kept = s.slice(0, n);
  return kept + truncationMarker(whole - jsonBytes(kept));
}

/** A message's text in one string: its content (parts' text, placeholders as text), its tool calls. */
function messageText(m: BroadcastMessage): string {
  const texts: string[] = [];
  if (typeof m.content === "string") texts.push(m.content);
  else if (Array.isArray(m.content)) {
    for (const p of m.content as unknown[]) {
      if (isPlaceholder(p)) texts.push(placeholderText(p));
      else if (typeof (p as { text?: unknown }).text === "string") texts.push((p as { text: string }).text);
    }
  }
  if (m.tool_calls !== undefined) texts.push(JSON.stringify(m.tool_calls));
  return texts.join("\n");
}

/** The messages within `budget` bytes of JSON (the array included), in order, cut with a marker. */
export function capMessages(messages: readonly BroadcastMessage[], budget: number): BroadcastMessage[] {
  const whole = jsonBytes(messages);
  if (whole <= budget) return [...messages];
  let room = budget - 2 - MARKER_RESERVE; // the brackets, and the marker
  const kept: BroadcastMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const comma = kept.length > 0 ? 1 : 0;
    const size = jsonBytes(m) + comma;
    if (size <= room) {
      kept.push(m);
      room -= size;
      continue;
    }
    // The message at the cut: its role (and name and tool call id when they fit) and the start
    // of its text, as one string.
    let shell: BroadcastMessage = { role: m.role, content: "" };
    const named: BroadcastMessage = { role: m.role, content: "" };
    if (typeof m.name === "string") named.name = m.name;
    if (typeof m.tool_call_id === "string") named.tool_call_id = m.tool_call_id;
    if (jsonBytes(named) + comma <= room) shell = named;
    const text = messageText(m);
    const n = jsonPrefixLength(text, Math.max(0, room - jsonBytes(shell) - comma));
    const keptBytes = budget - 2 - MARKER_RESERVE - room;
    const head = text.slice(0, n);
    const notKept = Math.max(0, whole - keptBytes - jsonBytes(head));
    shell.content = head + truncationMarker(notKept, messages.length - i - 1);
    kept.push(shell);
    break;
  }
  return kept;
}

/** The prompt and completion within `maxBytes` of JSON in all (see CappedContent). */
export function capContent(
  input: readonly BroadcastMessage[],
  output: string | null,
  maxBytes: number,
): CappedContent {
  if (jsonBytesAtMost(input) + jsonBytesAtMost(output) <= maxBytes) return { input: [...input], output };
  const inBytes = jsonBytes(input);
  const outBytes = output === null ? 0 : jsonBytes(output);
  if (inBytes + outBytes <= maxBytes) return { input: [...input], output };
  const half = Math.floor(maxBytes / 2);
  const outBudget = outBytes <= half ? outBytes : inBytes <= half ? maxBytes - inBytes : maxBytes - half;
  const inBudget = maxBytes - Math.min(outBytes, outBudget);
  return {
    input: capMessages(input, inBudget),
    output: output === null ? null : capText(output, outBudget),
  };
}
