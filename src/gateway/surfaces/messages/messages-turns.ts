import { ANTHROPIC_REASONING_FORMAT } from "../../providers/anthropic/anthropic-request.js";
import { fieldError, isObject, type Json, type LeftOut } from "./messages-fields.js";

/**
 * A Messages request's `system` and `messages` → chat messages (docs/surfaces/messages.md
 * "Request"). Anthropic's turns hold typed blocks; a chat turn holds one role's content, so:
 *
 * - `system` (a string or text blocks, joined by a line break) is the first system message; a
 *   `role: "system"` message stays a system message where it is;
 * - a user turn's `tool_result` blocks become `role: "tool"` messages, in order, ahead of a user
 *   message with the turn's other blocks (chat wants the tool answers right after the assistant's
 *   calls; Anthropic wants them first in the turn anyway);
 * - an assistant turn's text blocks are joined into `content` (null when it only calls tools),
 *   its `tool_use` blocks are `tool_calls` (the input as JSON text), its `thinking` and
 *   `redacted_thinking` blocks are `reasoning_details` in the shape the Anthropic provider
 *   adapter returns and reads back (format anthropic-claude-v1, signature kept), so a later hop
 *   to an Anthropic provider sends the signed blocks back as they were.
 *
 * A block the chat shape cannot carry (document, search_result, server tool blocks, compaction,
 * an unknown type) is a 400 naming it, never dropped.
 */

/** Block types Anthropic defines that no chat completions provider can take. */
const UNCARRIED = new Set([
  "document",
  "search_result",
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
  "container_upload",
  "compaction",
  "mcp_tool_use",
  "mcp_tool_result",
]);

const TEXT_KEYS = new Set(["type", "text"]);
const IMAGE_KEYS = new Set(["type", "source"]);
const TOOL_RESULT_KEYS = new Set(["type", "tool_use_id", "content", "is_error"]);
const TOOL_USE_KEYS = new Set(["type", "id", "name", "input"]);
const THINKING_KEYS = new Set(["type", "thinking", "signature"]);
const REDACTED_KEYS = new Set(["type", "data"]);
const MESSAGE_KEYS = new Set(["role", "content"]);

/** The media types Anthropic takes in a base64 image source. */
const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/** Where a block may appear, for the 400 that names a block in the wrong turn. */
const ASSISTANT_ONLY = new Set(["tool_use", "thinking", "redacted_thinking"]);
const USER_ONLY = new Set(["image", "tool_result"]);

function blockType(b: unknown, field: string): { block: Json; type: string } {
  if (!isObject(b)) throw fieldError(field, "must be a content block (an object)");
  if (typeof b.type !== "string") throw fieldError(`${field}.type`, "required");
  return { block: b, type: b.type };
}

/** The 400 for a block type that is not one of the turn's. */
function misplaced(type: string, field: string, role: "user" | "assistant"): never {
  if (UNCARRIED.has(type))
    throw fieldError(`${field}.type`, `"${type}" blocks cannot be carried to a chat completions provider`);
  if (role === "user" && ASSISTANT_ONLY.has(type))
    throw fieldError(`${field}.type`, `"${type}" blocks belong in assistant turns`);
  if (role === "assistant" && USER_ONLY.has(type))
    throw fieldError(`${field}.type`, `"${type}" blocks belong in user turns`);
  throw fieldError(`${field}.type`, `unknown block type "${type}"`);
}

function textOf(b: Json, field: string, left: LeftOut): string {
  if (typeof b.text !== "string") throw fieldError(`${field}.text`, "required: a string");
  left.extras(b, TEXT_KEYS, "text");
  return b.text;
}

/** Text blocks only (system, a system message, a tool result), joined by a line break. */
function joinedText(content: unknown, field: string, left: LeftOut): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw fieldError(field, "must be a string or a list of text blocks");
  return content
    .map((b: unknown, j) => {
      const { block, type } = blockType(b, `${field}[${j}]`);
      if (type !== "text") throw fieldError(`${field}[${j}].type`, `only "text" blocks are allowed here`);
      return textOf(block, `${field}[${j}]`, left);
    })
    .join("\n");
}

function imagePart(b: Json, field: string, left: LeftOut): Json {
  const s = b.source;
  if (!isObject(s)) throw fieldError(`${field}.source`, "required: an object");
  left.extras(b, IMAGE_KEYS, "image");
  if (s.type === "base64") {
    if (typeof s.media_type !== "string" || !IMAGE_TYPES.has(s.media_type))
      throw fieldError(`${field}.source.media_type`, `must be one of ${[...IMAGE_TYPES].join(", ")}`);
    if (typeof s.data !== "string" || s.data === "")
      throw fieldError(`${field}.source.data`, "required: base64 text");
    return { type: "image_url", image_url: { url: `data:${s.media_type};base64,${s.data}` } };
  }
  if (s.type === "url") {
    if (typeof s.url !== "string" || !/^https?:\/\//.test(s.url))
      throw fieldError(`${field}.source.url`, "required: an http(s) URL");
    return { type: "image_url", image_url: { url: s.url } };
  }
  throw fieldError(
    `${field}.source.type`,
    `must be "base64" or "url" (a "file" source of the Files API cannot be carried)`,
  );
}

/**
 * A tool_result → a `role: "tool"` message. Its content is text (a string, or text blocks joined
 * by a line break): chat tool messages carry text. `is_error: true` has no chat counterpart and
 * is said in the text, which starts with "Error: ".
 */
function toolMessage(b: Json, field: string, left: LeftOut): Json {
  if (typeof b.tool_use_id !== "string" || b.tool_use_id === "")
    throw fieldError(`${field}.tool_use_id`, "required: the id of the tool_use it answers");
  if (b.is_error !== undefined && b.is_error !== null && typeof b.is_error !== "boolean")
    throw fieldError(`${field}.is_error`, "must be a boolean");
  left.extras(b, TOOL_RESULT_KEYS, "tool_result");
  const text =
    b.content === undefined || b.content === null ? "" : joinedText(b.content, `${field}.content`, left);
  return {
    role: "tool",
    tool_call_id: b.tool_use_id,
    content: b.is_error === true ? `Error: ${text}` : text,
  };
}

function userTurn(content: unknown[], field: string, left: LeftOut, out: unknown[]): void {
  const parts: Json[] = [];
  content.forEach((raw: unknown, j) => {
    const f = `${field}[${j}]`;
    const { block, type } = blockType(raw, f);
    if (type === "text") parts.push({ type: "text", text: textOf(block, f, left) });
    else if (type === "image") parts.push(imagePart(block, f, left));
    else if (type === "tool_result") out.push(toolMessage(block, f, left));
    else misplaced(type, f, "user");
  });
  if (parts.length > 0) out.push({ role: "user", content: parts });
}

function toolCall(b: Json, field: string, left: LeftOut): Json {
  if (typeof b.id !== "string" || b.id === "") throw fieldError(`${field}.id`, "required");
  if (typeof b.name !== "string" || b.name === "") throw fieldError(`${field}.name`, "required");
  if (b.input !== undefined && !isObject(b.input)) throw fieldError(`${field}.input`, "must be an object");
  left.extras(b, TOOL_USE_KEYS, "tool_use");
  return { id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } };
}

/** A thinking block → a reasoning.text detail; its signature is kept, an empty one left out. */
function thinkingDetail(b: Json, field: string, index: number, left: LeftOut): Json {
  if (typeof b.thinking !== "string") throw fieldError(`${field}.thinking`, "required: a string");
  if (b.signature !== undefined && b.signature !== null && typeof b.signature !== "string")
    throw fieldError(`${field}.signature`, "must be a string");
  left.extras(b, THINKING_KEYS, "thinking");
  return {
    type: "reasoning.text",
    text: b.thinking,
    ...(typeof b.signature === "string" && b.signature !== "" ? { signature: b.signature } : {}),
    format: ANTHROPIC_REASONING_FORMAT,
    index,
  };
}

function redactedDetail(b: Json, field: string, index: number, left: LeftOut): Json {
  if (typeof b.data !== "string" || b.data === "") throw fieldError(`${field}.data`, "required");
  left.extras(b, REDACTED_KEYS, "redacted_thinking");
  return { type: "reasoning.encrypted", data: b.data, format: ANTHROPIC_REASONING_FORMAT, index };
}

function assistantTurn(content: unknown[], field: string, left: LeftOut): Json {
  let text = "";
  const calls: Json[] = [];
  const details: Json[] = [];
  content.forEach((raw: unknown, j) => {
    const f = `${field}[${j}]`;
    const { block, type } = blockType(raw, f);
    // Joined as the provider adapters join an answer's text blocks: a round trip keeps the text.
    if (type === "text") text += textOf(block, f, left);
    else if (type === "tool_use") calls.push(toolCall(block, f, left));
    else if (type === "thinking") details.push(thinkingDetail(block, f, details.length, left));
    else if (type === "redacted_thinking") details.push(redactedDetail(block, f, details.length, left));
    else misplaced(type, f, "assistant");
  });
  return {
    role: "assistant",
    content: text === "" && calls.length > 0 ? null : text,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
    ...(details.length > 0 ? { reasoning_details: details } : {}),
  };
}

/** `system` and `messages` of a Messages request → chat messages, in order. */
export function turnsToChat(system: unknown, messages: unknown[], left: LeftOut): unknown[] {
  const out: unknown[] = [];
  if (system !== undefined && system !== null) {
    const text = joinedText(system, "system", left);
    if (text.trim() !== "") out.push({ role: "system", content: text });
  }
  messages.forEach((m: unknown, i) => {
    const field = `messages[${i}]`;
    if (!isObject(m)) throw fieldError(field, "must be an object");
    const { role, content } = m;
    if (role !== "user" && role !== "assistant" && role !== "system")
      throw fieldError(`${field}.role`, `must be "user", "assistant" or "system"`);
    left.extras(m, MESSAGE_KEYS, "messages");
    if (typeof content === "string") {
      out.push({ role, content });
      return;
    }
    if (!Array.isArray(content))
      throw fieldError(`${field}.content`, "required: a string or a list of blocks");
    if (content.length === 0) throw fieldError(`${field}.content`, "must not be empty");
    if (role === "system") out.push({ role, content: joinedText(content, `${field}.content`, left) });
    else if (role === "user") userTurn(content, `${field}.content`, left, out);
    else out.push(assistantTurn(content, `${field}.content`, left));
  });
  return out;
}
