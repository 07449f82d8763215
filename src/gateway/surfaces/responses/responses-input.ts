import { isObject, optString, refuse, reqString, type Json } from "./body-fields.js";
import { detailsOfItem } from "./reasoning-carry.js";
import { namespacedChatName } from "./responses-tools.js";

/**
 * A Responses `input` → chat messages (docs/surfaces/responses.md "Input items").
 *
 * - A string is one user message.
 * - Messages (with or without `type: "message"`) of role user, system or developer keep their
 *   role; their parts become chat parts: input_text → text, input_image → image_url (its
 *   `detail`; "original", which chat lacks, as "high"), input_file → file, input_audio →
 *   input_audio, input_video → video_url (the chat surface's own part types). A part naming a
 *   stored file (`file_id`) is refused: Gatehouse keeps no files.
 * - One assistant turn is a run of consecutive assistant messages, `function_call` items and
 *   `reasoning` items: it becomes one chat assistant message, its text (output_text parts),
 *   `refusal`, `tool_calls` (one per function_call, its call_id the call's id, a namespaced
 *   function under its chat name) and `reasoning_details` (from the reasoning items:
 *   reasoning-carry.ts). A run of reasoning alone (no answer after it) has nothing to attach to:
 *   it is left out, and named in `leftOut`.
 * - `function_call_output` → a `tool` message (its output a string, or parts as above).
 * - Anything stateful (`item_reference`, `compaction`) or produced by a hosted tool is refused,
 *   naming the item: Gatehouse keeps nothing and runs no hosted tools.
 */

type Role = "user" | "system" | "developer" | "assistant";
const ROLES: readonly Role[] = ["user", "system", "developer", "assistant"];
const IMAGE_DETAIL = new Map([
  ["auto", "auto"],
  ["low", "low"],
  ["high", "high"],
  ["original", "high"],
]);

const stored = (path: string, what: string) =>
  refuse(path, `names a stored ${what}; Gatehouse keeps no files: send its content inline`);

/** One input part of a user, system, developer or tool-output content list → a chat part. */
function chatPart(p: unknown, path: string): Json {
  if (!isObject(p)) throw refuse(path, "must be an object");
  const type = reqString(p, "type", `${path}.type`);
  switch (type) {
    case "input_text":
      return { type: "text", text: reqString(p, "text", `${path}.text`) };
    case "input_image": {
      if (p.file_id !== undefined && p.file_id !== null) throw stored(`${path}.file_id`, "file");
      const url = reqString(p, "image_url", `${path}.image_url`);
      const detail = optString(p, "detail", `${path}.detail`);
      const chatDetail = detail === undefined ? undefined : IMAGE_DETAIL.get(detail);
      if (detail !== undefined && chatDetail === undefined) {
        throw refuse(`${path}.detail`, 'must be "auto", "low", "high" or "original"');
      }
      return { type: "image_url", image_url: { url, ...(chatDetail ? { detail: chatDetail } : {}) } };
    }
    case "input_file": {
      if (p.file_id !== undefined && p.file_id !== null) throw stored(`${path}.file_id`, "file");
      const data =
        optString(p, "file_data", `${path}.file_data`) ?? optString(p, "file_url", `${path}.file_url`);
      if (data === undefined) throw refuse(`${path}.file_data`, "required (or file_url)");
      const filename = optString(p, "filename", `${path}.filename`);
      return { type: "file", file: { file_data: data, ...(filename !== undefined ? { filename } : {}) } };
    }
    case "input_audio": {
      const audio = p.input_audio;
      if (!isObject(audio)) throw refuse(`${path}.input_audio`, "required");
      return {
        type: "input_audio",
        input_audio: {
          data: reqString(audio, "data", `${path}.input_audio.data`),
          format: reqString(audio, "format", `${path}.input_audio.format`),
        },
      };
    }
    case "input_video":
      return { type: "video_url", video_url: { url: reqString(p, "video_url", `${path}.video_url`) } };
    default:
      throw refuse(`${path}.type`, `${JSON.stringify(type)} is not an input part Gatehouse can send`);
  }
}

function chatContent(content: unknown, path: string): string | Json[] {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw refuse(path, "must be a string or a list of parts");
  return content.map((p, j) => chatPart(p, `${path}[${j}]`));
}

/** The assistant turn being gathered from consecutive items. */
interface Turn {
  /** The texts of its messages (parts of one message joined, messages separated by a blank line). */
  texts: string[];
  refusal: string | null;
  toolCalls: Json[];
  details: Json[];
  /** Where its first reasoning item was, named when the turn has nothing else. */
  reasoningAt: string | null;
}

const newTurn = (): Turn => ({ texts: [], refusal: null, toolCalls: [], details: [], reasoningAt: null });

function assistantText(content: unknown, path: string, turn: Turn): void {
  if (content === undefined || content === null) return;
  if (typeof content === "string") {
    turn.texts.push(content);
    return;
  }
  if (!Array.isArray(content)) throw refuse(path, "must be a string or a list of parts");
  let text = "";
  content.forEach((p, j) => {
    const at = `${path}[${j}]`;
    if (!isObject(p)) throw refuse(at, "must be an object");
    const type = reqString(p, "type", `${at}.type`);
    // input_text: the SDK's "easy" message form lets an assistant message carry it.
    if (type === "output_text" || type === "input_text") text += reqString(p, "text", `${at}.text`);
    else if (type === "refusal")
      turn.refusal = (turn.refusal ?? "") + reqString(p, "refusal", `${at}.refusal`);
    else throw refuse(`${at}.type`, `${JSON.stringify(type)} is not an assistant content part`);
  });
  turn.texts.push(text);
}

export interface ChatMessages {
  messages: Json[];
  /** Reasoning items left out (no assistant turn after them), as `input[i]:reasoning`. */
  leftOut: string[];
}

/** `instructions` and `input` → the chat messages. */
export function inputToMessages(input: unknown, instructions: string | undefined): ChatMessages {
  const messages: Json[] = [];
  const leftOut: string[] = [];
  if (instructions !== undefined) messages.push({ role: "system", content: instructions });
  if (input === undefined || input === null) return { messages, leftOut };
  if (typeof input === "string") {
    messages.push({ role: "user", content: input });
    return { messages, leftOut };
  }
  if (!Array.isArray(input)) throw refuse("input", "must be a string or a list of items");

  let turn: Turn | null = null;
  const endTurn = (): void => {
    if (!turn) return;
    const t = turn;
    turn = null;
    if (t.texts.length === 0 && t.refusal === null && t.toolCalls.length === 0) {
      if (t.reasoningAt !== null) leftOut.push(`${t.reasoningAt}:reasoning`);
      return;
    }
    const text = t.texts.join("\n\n");
    messages.push({
      role: "assistant",
      content: text === "" && t.toolCalls.length > 0 ? null : text,
      ...(t.refusal !== null ? { refusal: t.refusal } : {}),
      ...(t.toolCalls.length > 0 ? { tool_calls: t.toolCalls } : {}),
      ...(t.details.length > 0 ? { reasoning_details: t.details } : {}),
    });
  };

  input.forEach((item, i) => {
    const path = `input[${i}]`;
    if (!isObject(item)) throw refuse(path, "must be an object");
    const type = item.type === undefined || item.type === null ? "message" : item.type;
    if (typeof type !== "string") throw refuse(`${path}.type`, "must be a string");
    switch (type) {
      case "message": {
        const role = reqString(item, "role", `${path}.role`);
        if (!(ROLES as readonly string[]).includes(role)) {
          throw refuse(`${path}.role`, 'must be "user", "system", "developer" or "assistant"');
        }
        if (role === "assistant") {
          turn ??= newTurn();
          assistantText(item.content, `${path}.content`, turn);
          return;
        }
        endTurn();
        messages.push({ role, content: chatContent(item.content, `${path}.content`) });
        return;
      }
      case "function_call": {
        const callId = reqString(item, "call_id", `${path}.call_id`);
        const name = reqString(item, "name", `${path}.name`);
        const namespace = optString(item, "namespace", `${path}.namespace`);
        const args = reqString(item, "arguments", `${path}.arguments`);
        turn ??= newTurn();
        turn.toolCalls.push({
          id: callId,
          type: "function",
          function: {
            name: namespace !== undefined ? namespacedChatName(namespace, name) : name,
            arguments: args,
          },
        });
        return;
      }
      case "reasoning": {
        turn ??= newTurn();
        turn.reasoningAt ??= path;
        turn.details.push(...detailsOfItem(item, path));
        return;
      }
      case "function_call_output": {
        endTurn();
        const callId = reqString(item, "call_id", `${path}.call_id`);
        const output = item.output;
        if (typeof output !== "string" && !Array.isArray(output)) {
          throw refuse(`${path}.output`, "must be a string or a list of parts");
        }
        messages.push({ role: "tool", tool_call_id: callId, content: chatContent(output, `${path}.output`) });
        return;
      }
      case "item_reference":
        throw refuse(
          `${path}.type`,
          "item_reference points at a stored item; Gatehouse is stateless and keeps none: send the item itself",
        );
      default:
        throw refuse(
          `${path}.type`,
          `${JSON.stringify(type)} items are not supported (Gatehouse runs no hosted tools and keeps no state)`,
        );
    }
  });
  endTurn();
  return { messages, leftOut };
}
