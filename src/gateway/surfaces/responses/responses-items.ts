import { isObject, type Json } from "./body-fields.js";
import { carryDetails, viewOf } from "./reasoning-carry.js";
import type { ResponsesEcho } from "./responses-request.js";

/**
 * The pieces of a Responses result object shared by the whole answer (responses-result.ts) and
 * the stream (responses-stream.ts), so that a stream's final response is the object a whole
 * answer would have been (docs/surfaces/responses.md "Result object").
 */

export type ItemStatus = "in_progress" | "completed" | "incomplete";

/**
 * Item ids are the response id (the generation id, which GET /generation?id= looks up) with the
 * item's kind before it and its output index after: `msg_gen-…_1`. Unique, and a reader can tell
 * which response an item came from.
 */
export const itemId = (kind: "rs" | "msg" | "fc", responseId: string, outputIndex: number): string =>
  `${kind}_${responseId}_${outputIndex}`;

/** A call id for a tool call the upstream gave none. */
export const callIdFor = (responseId: string, outputIndex: number): string =>
  `call_${responseId}_${outputIndex}`;

/** One output_text part: the text, `annotations: []` (OpenAI's types expect it) and its log probabilities. */
export const textPart = (text: string, logprobs: readonly Json[]): Json => ({
  type: "output_text",
  text,
  annotations: [],
  logprobs,
});

export const refusalPart = (refusal: string): Json => ({ type: "refusal", refusal });

export const messageItem = (id: string, content: readonly Json[], status: ItemStatus): Json => ({
  type: "message",
  id,
  role: "assistant",
  status,
  content,
});

/**
 * A reasoning item: its summary as a `summary_text` part, its reasoning text as a
 * `reasoning_text` part (`texts`: what a whole answer's details say, viewOf, or what a stream
 * sent), the details that carry it back (reasoning-carry.ts) in `encrypted_content`, and the
 * first detail's `format` and last `signature` (OpenRouter's reasoning items have both; other
 * readers ignore them).
 */
export function reasoningItem(
  id: string,
  details: readonly Json[],
  texts: { summary: string; text: string },
  status: ItemStatus,
): Json {
  const v = viewOf(details, null);
  const carried = carryDetails(details);
  return {
    type: "reasoning",
    id,
    status,
    summary: texts.summary !== "" ? [{ type: "summary_text", text: texts.summary }] : [],
    ...(texts.text !== "" ? { content: [{ type: "reasoning_text", text: texts.text }] } : {}),
    ...(carried !== null ? { encrypted_content: carried } : {}),
    ...(v.format !== null ? { format: v.format } : {}),
    ...(v.signature !== null ? { signature: v.signature } : {}),
  };
}

/** A function_call item: a namespaced function under its Responses name and namespace. */
export function functionCallItem(
  id: string,
  callId: string,
  chatName: string,
  args: string,
  status: ItemStatus,
  echo: ResponsesEcho,
): Json {
  const n = echo.names.fromChat(chatName);
  return {
    type: "function_call",
    id,
    call_id: callId,
    name: n.name,
    ...(n.namespace !== undefined ? { namespace: n.namespace } : {}),
    arguments: args,
    status,
  };
}

/** UTF-8 bytes of a token, for the `bytes` the Responses log probabilities require (chat allows null). */
const bytesOf = (token: string, bytes: unknown): number[] =>
  Array.isArray(bytes) ? (bytes as number[]) : [...Buffer.from(token, "utf8")];

/**
 * Chat log probabilities (`logprobs.content`) → the Responses form, entry for entry: the same
 * token, logprob and alternatives, `bytes` always a list.
 */
export function logprobsOf(chat: unknown): Json[] {
  if (!isObject(chat) || !Array.isArray(chat.content)) return [];
  return chat.content.filter(isObject).map((e) => {
    const token = typeof e.token === "string" ? e.token : "";
    const top = Array.isArray(e.top_logprobs) ? e.top_logprobs.filter(isObject) : [];
    return {
      token,
      logprob: e.logprob,
      bytes: bytesOf(token, e.bytes),
      top_logprobs: top.map((t) => {
        const tt = typeof t.token === "string" ? t.token : "";
        return { token: tt, logprob: t.logprob, bytes: bytesOf(tt, t.bytes) };
      }),
    };
  });
}

/** Why a response is incomplete, from the chat finish reason; null when it is complete. */
export function incompleteReason(
  finishReason: string | null | undefined,
): "max_output_tokens" | "content_filter" | null {
  if (finishReason === "length") return "max_output_tokens";
  if (finishReason === "content_filter") return "content_filter";
  return null;
}

/** The text of every output_text part of the message items: the result's `output_text`. */
export function outputText(output: readonly Json[]): string {
  let text = "";
  for (const item of output) {
    if (item.type !== "message" || !Array.isArray(item.content)) continue;
    for (const p of item.content as Json[]) if (p.type === "output_text") text += p.text as string;
  }
  return text;
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/**
 * The chat usage (chat/wire.ts usageWire) → the Responses usage: input/output tokens with their
 * cached, cache-write and reasoning details (integers, always present), cost and is_byok as they were, and
 * cost_details under the Responses names (`upstream_inference_input_cost` /
 * `_output_cost`, where chat says `_prompt_cost` / `_completions_cost`).
 */
export function responsesUsage(u: Json): Json {
  const prompt = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const completion = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {};
  const input = num(u.prompt_tokens);
  const output = num(u.completion_tokens);
  const d = isObject(u.cost_details) ? u.cost_details : null;
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: num(prompt.cached_tokens),
      cache_write_tokens: num(prompt.cache_write_tokens),
    },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: num(completion.reasoning_tokens) },
    total_tokens: typeof u.total_tokens === "number" ? u.total_tokens : input + output,
    ...(typeof u.cost === "number" ? { cost: u.cost } : {}),
    ...(typeof u.is_byok === "boolean" ? { is_byok: u.is_byok } : {}),
    ...(d
      ? {
          cost_details: {
            upstream_inference_cost:
              typeof d.upstream_inference_cost === "number" ? d.upstream_inference_cost : null,
            upstream_inference_input_cost: num(d.upstream_inference_prompt_cost),
            upstream_inference_output_cost: num(d.upstream_inference_completions_cost),
          },
        }
      : {}),
  };
}

/** What a response is at some moment: created, in progress, or at its end. */
export interface ResponseState {
  status: "in_progress" | "completed" | "incomplete" | "failed";
  completedAt: number | null;
  output: readonly Json[];
  usage: Json | null;
  incomplete: "max_output_tokens" | "content_filter" | null;
  error: { code: string; message: string } | null;
  /** A failed response's kind of error (the gateway's error types), sent as `error_type`. */
  errorType?: string;
}

/**
 * The result object's own fields (those that are not echoes of the request), in wire order. The
 * echoed fields follow them (ResponsesEcho.fields): every required key of docs/surfaces/responses.md
 * "Result object" is in one or the other.
 */
export function responseOwnFields(
  head: { id: string; model: string; createdAt: number },
  s: ResponseState,
): Json {
  return {
    id: head.id,
    object: "response",
    created_at: head.createdAt,
    completed_at: s.completedAt,
    status: s.status,
    model: head.model,
    output: s.output,
    output_text: outputText(s.output),
    error: s.error,
    incomplete_details: s.incomplete !== null ? { reason: s.incomplete } : null,
    ...(s.usage !== null ? { usage: s.usage } : {}),
    ...(s.errorType !== undefined ? { error_type: s.errorType } : {}),
  };
}
