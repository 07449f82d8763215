import type { ChatBody } from "../../chat/serve.js";
import {
  isObject,
  optArray,
  optBool,
  optEnum,
  optInt,
  optNumber,
  optObject,
  optString,
  optStrings,
  refuse,
  reqString,
  type Json,
} from "./body-fields.js";
import { LeftOut } from "../messages/messages-fields.js";
import { inputToMessages } from "./responses-input.js";
import { toolChoiceToChat, toolsToChat, type ToolNames } from "./responses-tools.js";

/**
 * A Responses request (POST /responses) → the gateway's chat request
 * (docs/surfaces/responses.md "Request"). Pure: it validates, translates and says what it left
 * out; the route serves the chat request and turns its answer back (responses-result.ts,
 * responses-stream.ts).
 *
 * Gatehouse is stateless: `store: true`, a `previous_response_id`, a `conversation`,
 * `background: true` and a stored `prompt` are refused (400, naming the field). Every field that
 * changes the answer is carried into the chat request or refused; fields that change nothing
 * Gatehouse answers (service_tier, include, prompt_cache_key, client_metadata, truncation,
 * metadata, safety_identifier, ...) and fields this version does not know are dropped and named
 * in `leftOut`, which the route sends back in the `x-gatehouse-left-out` header.
 */

/** The request fields the result object repeats, and what maps the answer's tool names back. */
export interface ResponsesEcho {
  /** In wire form; the result object's required ones always present. */
  readonly fields: Readonly<Json>;
  /** Chat names of namespaced functions → their Responses names (responses-tools.ts). */
  readonly names: ToolNames;
}

export interface ResponsesToChat {
  chat: ChatBody;
  /**
   * What was dropped, each named once: top-level fields, `tools[<type>]`, `reasoning.<field>`,
   * `input[i]:reasoning`; cut to header-safe characters, at most LeftOut.MAX_NAMES listed.
   */
  leftOut: string[];
  echo: ResponsesEcho;
}

/** Read below; every other field present is left out (and named). */
const HANDLED = new Set([
  "model",
  "models",
  "input",
  "instructions",
  "stream",
  "store",
  "previous_response_id",
  "conversation",
  "background",
  "prompt",
  "temperature",
  "top_p",
  "top_k",
  "presence_penalty",
  "frequency_penalty",
  "top_logprobs",
  "max_output_tokens",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "text",
  "reasoning",
  "user",
  "session_id",
  "provider",
  "trace",
  "plugins",
  "debug",
  "cache_control",
  "modalities",
  "metadata",
  "include",
  "prompt_cache_key",
  "safety_identifier",
  "truncation",
]);

/** `include` values Gatehouse honours anyway: reasoning always travels (reasoning-carry.ts), logprobs when asked. */
const INCLUDE_HONOURED = new Set(["reasoning.encrypted_content", "message.output_text.logprobs"]);

const STATELESS = "Gatehouse is stateless and keeps no responses";

function refuseStateful(body: Json): void {
  if (body.store === true) throw refuse("store", `${STATELESS}: send store: false, or leave it out`);
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    throw refuse("previous_response_id", `${STATELESS}: send the whole conversation in input`);
  }
  if (body.conversation !== undefined && body.conversation !== null) {
    throw refuse("conversation", `${STATELESS}: send the whole conversation in input`);
  }
  if (body.background === true)
    throw refuse("background", `${STATELESS}: a background response could not be fetched later`);
  if (body.prompt !== undefined && body.prompt !== null) {
    throw refuse("prompt", `${STATELESS} and keeps no prompt templates: send instructions and input`);
  }
  optBool(body, "store", "store");
  optBool(body, "background", "background");
}

function metadataOf(body: Json): Json | undefined {
  const m = optObject(body, "metadata", "metadata");
  if (!m) return undefined;
  for (const [k, v] of Object.entries(m))
    if (typeof v !== "string") throw refuse(`metadata.${k}`, "must be a string");
  return m;
}

/** `text.format` → the chat `response_format` (undefined for plain text, chat's default). */
function responseFormat(format: Json | undefined): Json | undefined {
  if (!format) return undefined;
  const type = reqString(format, "type", "text.format.type");
  if (type === "text") return undefined;
  if (type === "json_object") return { type: "json_object" };
  if (type !== "json_schema")
    throw refuse("text.format.type", 'must be "text", "json_object" or "json_schema"');
  const schema = optObject(format, "schema", "text.format.schema");
  if (!schema) throw refuse("text.format.schema", "required");
  const description = optString(format, "description", "text.format.description");
  const strict = optBool(format, "strict", "text.format.strict");
  return {
    type: "json_schema",
    json_schema: {
      name: reqString(format, "name", "text.format.name"),
      schema,
      ...(description !== undefined ? { description } : {}),
      ...(strict !== undefined ? { strict } : {}),
    },
  };
}

/**
 * The bounds the chat request's schema sets (src/http/schemas/chat.ts): the route hands this body
 * to the data plane directly, so the translation checks them.
 */
const MAX_MODELS = 16;
const MAX_TOKENS = 10_000_000;
const SAMPLING: readonly [string, number, number][] = [
  ["temperature", 0, 2],
  ["top_p", 0, 1],
  ["presence_penalty", -2, 2],
  ["frequency_penalty", -2, 2],
];

/** The router's provider preferences, checked for the shapes the attempt planner reads. */
function providerOf(p: Json | undefined): Json | undefined {
  if (!p) return undefined;
  for (const k of ["order", "only", "ignore"]) optStrings(p, k, `provider.${k}`, 256);
  for (const k of ["allow_fallbacks", "require_parameters"]) optBool(p, k, `provider.${k}`);
  optObject(p, "max_price", "provider.max_price");
  return p;
}

const EFFORTS = ["max", "xhigh", "high", "medium", "low", "minimal", "none"] as const;
const SUMMARIES = ["auto", "concise", "detailed"] as const;

/**
 * `reasoning` → the chat `reasoning` (effort, max_tokens, enabled). `summary` asks how reasoning is
 * summarised, which is the provider's to decide: it is echoed, not sent (Codex sends it on every
 * request, and a chat `reasoning` object would count as a required parameter for routing).
 */
function reasoningOf(r: Json | undefined, leftOut: string[]): { chat: Json | undefined; echo: Json | null } {
  if (!r) return { chat: undefined, echo: null };
  const effort = optEnum(r, "effort", "reasoning.effort", EFFORTS);
  const summary = optEnum(r, "summary", "reasoning.summary", SUMMARIES);
  const maxTokens = optInt(r, "max_tokens", "reasoning.max_tokens", 0, MAX_TOKENS);
  const enabled = optBool(r, "enabled", "reasoning.enabled");
  const mode = optEnum(r, "mode", "reasoning.mode", ["standard", "pro"] as const);
  if (mode === "pro") throw refuse("reasoning.mode", '"pro" is a hosted mode Gatehouse cannot run');
  if (mode !== undefined) leftOut.push("reasoning.mode");
  if (r.context !== undefined && r.context !== null) leftOut.push("reasoning.context");
  const chat: Json = {
    ...(effort !== undefined ? { effort } : {}),
    ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
    ...(enabled !== undefined ? { enabled } : {}),
  };
  return {
    chat: Object.keys(chat).length > 0 ? chat : undefined,
    echo: { effort: effort ?? null, summary: summary ?? null },
  };
}

/** Copies `value` to `chat[key]` when it is set. */
function put(chat: ChatBody, key: string, value: unknown): void {
  if (value !== undefined) chat[key] = value;
}

export function responsesToChat(body: unknown): ResponsesToChat {
  if (!isObject(body)) throw refuse("body", "must be a JSON object");
  refuseStateful(body);
  const leftOut: string[] = [];
  for (const [k, v] of Object.entries(body))
    if (!HANDLED.has(k) && v !== null && v !== undefined) leftOut.push(k);

  const instructions = optString(body, "instructions", "instructions");
  const input = inputToMessages(body.input, instructions);
  if (input.messages.length === 0) throw refuse("input", "required (a string or a list of items)");
  leftOut.push(...input.leftOut);

  const chat: ChatBody = { messages: input.messages };
  put(chat, "model", optString(body, "model", "model", 256));
  const models = optStrings(body, "models", "models", 256);
  if (models && (models.length === 0 || models.length > MAX_MODELS)) {
    throw refuse("models", `must list 1 to ${MAX_MODELS} model ids`);
  }
  put(chat, "models", models);
  const stream = optBool(body, "stream", "stream");
  put(chat, "stream", stream);

  const sampling: Json = {};
  for (const [k, min, max] of SAMPLING) {
    const v = optNumber(body, k, k, min, max);
    sampling[k] = v ?? null;
    put(chat, k, v);
  }
  put(chat, "top_k", optInt(body, "top_k", "top_k", 0));
  const maxOutput = optInt(body, "max_output_tokens", "max_output_tokens", 1, MAX_TOKENS);
  put(chat, "max_tokens", maxOutput);

  const include = optArray(body, "include", "include");
  const topLogprobs = optInt(body, "top_logprobs", "top_logprobs", 0, 20);
  if ((topLogprobs ?? 0) > 0 || include?.includes("message.output_text.logprobs")) {
    chat.logprobs = true;
    if ((topLogprobs ?? 0) > 0) chat.top_logprobs = topLogprobs;
  }
  if (include?.some((v) => typeof v !== "string" || !INCLUDE_HONOURED.has(v))) leftOut.push("include");

  const toolset = toolsToChat(optArray(body, "tools", "tools"));
  leftOut.push(...toolset.leftOut);
  const choice = toolChoiceToChat(body.tool_choice, toolset);
  const allowed = choice.allowed;
  const tools = allowed
    ? toolset.tools?.filter((t) => allowed.has((t.function as Json).name as string))
    : toolset.tools;
  if (tools && tools.length > 0) {
    chat.tools = tools;
    put(chat, "tool_choice", choice.choice);
  } else if (choice.choice === "required") {
    throw refuse("tool_choice", "requires a tool call, but no function tool is left to call");
  }
  const parallel = optBool(body, "parallel_tool_calls", "parallel_tool_calls");
  put(chat, "parallel_tool_calls", parallel);

  const text = optObject(body, "text", "text");
  const format = text ? optObject(text, "format", "text.format") : undefined;
  put(chat, "response_format", responseFormat(format));
  const verbosity = text
    ? optEnum(text, "verbosity", "text.verbosity", ["low", "medium", "high"] as const)
    : undefined;
  put(chat, "verbosity", verbosity);

  const reasoning = reasoningOf(optObject(body, "reasoning", "reasoning"), leftOut);
  put(chat, "reasoning", reasoning.chat);

  const user = optString(body, "user", "user", 1024);
  put(chat, "user", user);
  put(chat, "session_id", optString(body, "session_id", "session_id", 256));
  put(chat, "provider", providerOf(optObject(body, "provider", "provider")));
  put(chat, "trace", optObject(body, "trace", "trace"));
  put(chat, "plugins", optArray(body, "plugins", "plugins"));
  put(chat, "debug", optObject(body, "debug", "debug"));
  put(chat, "cache_control", optObject(body, "cache_control", "cache_control"));

  const modalities = optArray(body, "modalities", "modalities");
  if (modalities) {
    if (modalities.some((m) => m !== "text")) throw refuse("modalities", 'only "text" output is supported');
    leftOut.push("modalities");
  }
  const metadata = metadataOf(body);
  if (metadata) leftOut.push("metadata");
  const echoed: Json = {};
  for (const k of ["prompt_cache_key", "safety_identifier", "truncation"]) {
    const v = optString(body, k, k);
    if (v !== undefined) {
      echoed[k] = v;
      leftOut.push(k);
    }
  }

  const fields: Json = {
    instructions: instructions ?? null,
    metadata: metadata ?? null,
    ...sampling,
    tools: toolset.echo,
    tool_choice: body.tool_choice ?? "auto",
    parallel_tool_calls: parallel ?? true,
    max_output_tokens: maxOutput ?? null,
    reasoning: reasoning.echo,
    text: { format: format ?? { type: "text" }, ...(verbosity !== undefined ? { verbosity } : {}) },
    ...(topLogprobs !== undefined ? { top_logprobs: topLogprobs } : {}),
    ...(user !== undefined ? { user } : {}),
    ...echoed,
    store: false,
  };
  // Header-safe and bounded: the names come from the client's keys (LeftOut, shared with Messages).
  const named = new LeftOut();
  for (const n of leftOut) named.add(n);
  return { chat, leftOut: named.list(), echo: { fields, names: toolset.names } };
}
