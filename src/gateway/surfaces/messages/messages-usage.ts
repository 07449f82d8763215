import { isObject, type Json } from "../../../lib/json-object.js";

/**
 * The chat answer's usage and finish reason in Anthropic's terms (docs/surfaces/messages.md
 * "Usage"), for a whole Message (messages-response.ts) and a stream (messages-stream.ts).
 *
 * The chat usage (usageWire) counts cached tokens inside `prompt_tokens`; Anthropic counts its
 * token classes apart: `input_tokens` = prompt − cache reads − cache writes, with
 * `cache_read_input_tokens` = the cached tokens and `cache_creation_input_tokens` = the writes
 * (`prompt_tokens_details.cache_write_tokens`; 0 when an upstream did not report them). The
 * router's additions (`cost`, `is_byok`, `cost_details`, chat key names) ride along in `usage`.
 */

const count = (v: unknown): number =>
  typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.round(v) : 0;

export interface TokenClasses {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** A prompt's tokens (the chat count, cached ones included) as Anthropic's three input classes. */
export function inputClasses(promptTokens: number, cachedTokens: number, cacheWriteTokens = 0): TokenClasses {
  const read = Math.min(count(cachedTokens), count(promptTokens));
  const write = Math.min(count(cacheWriteTokens), count(promptTokens) - read);
  return {
    input_tokens: count(promptTokens) - read - write,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
  };
}

/** The counts and money of a chat usage object (usageWire), as a message_delta's usage takes them. */
export function deltaUsage(u: Json): Json {
  const prompt = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const completion = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {};
  return {
    ...inputClasses(count(u.prompt_tokens), count(prompt.cached_tokens), count(prompt.cache_write_tokens)),
    output_tokens: count(u.completion_tokens),
    output_tokens_details: { thinking_tokens: count(completion.reasoning_tokens) },
    server_tool_use: null,
    ...(typeof u.cost === "number" ? { cost: u.cost } : {}),
    ...(typeof u.is_byok === "boolean" ? { is_byok: u.is_byok } : {}),
    ...(isObject(u.cost_details) ? { cost_details: u.cost_details } : {}),
  };
}

/** A whole Message's usage: message_delta's, with the keys only a Message has (null: not known). */
export function messageUsage(u: Json): Json {
  return { ...deltaUsage(u), cache_creation: null, service_tier: null, inference_geo: null };
}

/** Chat finish reasons → Anthropic stop reasons; another non-null one is an ordinary end of turn. */
const STOP_REASON: Readonly<Record<string, string>> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  function_call: "tool_use",
  content_filter: "refusal",
};

/**
 * The chat finish reason as a stop reason. A stop sequence ends the chat answer as "stop" too,
 * without saying which sequence, so it is "end_turn" and `stop_sequence` stays null.
 */
export function stopReason(finish: string | null): string | null {
  return finish === null ? null : (STOP_REASON[finish] ?? "end_turn");
}
