import { ANTHROPIC_REASONING_FORMAT } from "../../providers/anthropic/anthropic-request.js";
import { messageUsage, stopReason } from "./messages-usage.js";
import { isObject, type Json } from "../../../lib/json-object.js";

/**
 * A chat completion as the gateway answers it (chat/complete.ts) → an Anthropic Message
 * (docs/surfaces/messages.md "Response"): the generation's `gen-` id, its model and provider;
 * content blocks in Anthropic's order (thinking, text, tool_use), the stop reason and the usage in
 * Anthropic's token classes with the router's cost fields. Only the first choice is read: the
 * gateway answers one.
 */

/**
 * An answer's reasoning as thinking blocks. Anthropic's own items (format anthropic-claude-v1,
 * or none) go back as the blocks they were, pieces with the same `index` joined, with their
 * signature (or "" when unsigned: a later turn to Anthropic leaves an unsigned one out); an
 * encrypted one is a redacted_thinking block. Another provider's items cannot become a block
 * Anthropic would take back: its reasoning text, when there is some, is one unsigned thinking block.
 */
export function thinkingBlocks(details: unknown, reasoning: unknown): Json[] {
  const byIndex = new Map<number, Json>();
  if (Array.isArray(details)) {
    details.forEach((d: unknown, j) => {
      if (!isObject(d)) return;
      if (d.format !== undefined && d.format !== null && d.format !== ANTHROPIC_REASONING_FORMAT) return;
      const at = typeof d.index === "number" ? d.index : j;
      const block = byIndex.get(at);
      if (d.type === "reasoning.encrypted" && typeof d.data === "string") {
        byIndex.set(at, { type: "redacted_thinking", data: d.data });
      } else if (d.type === "reasoning.text") {
        const text = typeof d.text === "string" ? d.text : "";
        const signature = typeof d.signature === "string" ? d.signature : "";
        if (block?.type === "thinking") {
          block.thinking = `${block.thinking as string}${text}`;
          if (signature !== "") block.signature = signature;
        } else byIndex.set(at, { type: "thinking", thinking: text, signature });
      }
    });
  }
  if (byIndex.size === 0) {
    return typeof reasoning === "string" && reasoning !== ""
      ? [{ type: "thinking", thinking: reasoning, signature: "" }]
      : [];
  }
  return [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, b]) => b);
}

/**
 * A tool call's JSON arguments as the tool_use block's `input` object. Arguments that are not the
 * JSON text of an object (a model that broke off mid-call, or wrote a list) are the empty object:
 * Anthropic's clients take `input` as an object, and a tool run without its arguments fails in
 * the client, where the model sees the error on the next turn.
 */
export function toolInput(args: unknown): Json {
  if (typeof args !== "string" || args.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function toolUseBlocks(calls: unknown): Json[] {
  if (!Array.isArray(calls)) return [];
  return calls.flatMap((c: unknown) => {
    if (!isObject(c) || !isObject(c.function)) return [];
    return [
      {
        type: "tool_use",
        id: typeof c.id === "string" ? c.id : "",
        name: typeof c.function.name === "string" ? c.function.name : "",
        input: toolInput(c.function.arguments),
      },
    ];
  });
}

/**
 * The Message. A refusal (the chat message's `refusal`) is the text, with stop reason "refusal";
 * an answer that calls tools stops with "tool_use" even when its upstream said "stop" (clients
 * run the tools on that reason); `stop_sequence` is null (the chat answer does not say which
 * sequence stopped it).
 */
export function chatToMessage(completion: Json): Json {
  const choices = Array.isArray(completion.choices) ? (completion.choices as unknown[]) : [];
  const first = isObject(choices[0]) ? choices[0] : {};
  const message = isObject(first.message) ? first.message : {};
  const refusal = typeof message.refusal === "string" && message.refusal !== "" ? message.refusal : null;
  const text = typeof message.content === "string" && message.content !== "" ? message.content : refusal;
  const tools = toolUseBlocks(message.tool_calls);
  const content = [
    ...thinkingBlocks(message.reasoning_details, message.reasoning),
    ...(text !== null ? [{ type: "text", text, citations: null }] : []),
    ...tools,
  ];
  let stop = stopReason(typeof first.finish_reason === "string" ? first.finish_reason : null);
  if (refusal !== null) stop = "refusal";
  else if (tools.length > 0 && (stop === "end_turn" || stop === null)) stop = "tool_use";
  return {
    id: completion.id,
    type: "message",
    role: "assistant",
    model: completion.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    stop_details: null,
    container: null,
    usage: messageUsage(isObject(completion.usage) ? completion.usage : {}),
    ...(typeof completion.provider === "string" ? { provider: completion.provider } : {}),
  };
}
