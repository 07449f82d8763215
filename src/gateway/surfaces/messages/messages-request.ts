import type { ProviderPrefs } from "../../chat/attempts.js";
import type { ChatBody } from "../../chat/serve.js";
import { absent, fieldError, isObject, LeftOut, stringField, type Json } from "./messages-fields.js";
import { turnsToChat } from "./messages-turns.js";

/**
 * POST /messages: an Anthropic Messages request → the gateway's chat body (docs/surfaces/messages.md
 * "Request"). Pure: it validates and translates, and says what it dropped. Every field is either
 * translated, or dropped and named in `leftOut` (a field a chat completions provider cannot carry:
 * `cache_control`, `context_management`, `output_config`, `container`, `service_tier`, `speed`,
 * hosted tools, any top-level field this translation does not know), or refused with a 400 naming
 * it (a malformed value, a content block that cannot be carried). Nothing is dropped silently.
 */

/** The top-level fields translated (or checked) here; every other one is left out. */
const TRANSLATED = new Set([
  "model",
  "messages",
  "max_tokens",
  "system",
  "stream",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
  "metadata",
  "tool_choice",
  "tools",
  "thinking",
  "models",
  "fallbacks",
  "provider",
  "session_id",
  "user",
  "trace",
]);

const TOOL_KEYS = new Set(["type", "name", "description", "input_schema", "strict"]);
const THINKING_KEYS = new Set(["type", "budget_tokens"]);
const TOOL_CHOICE_KEYS = new Set(["type", "name", "disable_parallel_tool_use"]);
const METADATA_KEYS = new Set(["user_id"]);

/** The chat body's own bounds (the chat route's schema), so that the translation fits it. */
const MAX_MESSAGES = 10_000;
const MAX_TOKENS = 10_000_000;
const MAX_MODELS = 16;

/** A hosted (server) tool: Anthropic's dated types (`web_search_20250305`) and the router's own. */
const isHostedTool = (type: string): boolean => /_\d{8}$/.test(type) || type.startsWith("openrouter:");

function numberIn(v: unknown, field: string, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max)
    throw fieldError(field, `must be a number from ${min} to ${max}`);
  return v;
}

function integerFrom(v: unknown, field: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
    throw fieldError(
      field,
      `must be an integer of at least ${min}${max < Number.MAX_SAFE_INTEGER ? ` and at most ${max}` : ""}`,
    );
  return v;
}

function strings(v: unknown, field: string): string[] {
  if (!Array.isArray(v)) throw fieldError(field, "must be a list of strings");
  v.forEach((s: unknown, i) => {
    if (typeof s !== "string") throw fieldError(`${field}[${i}]`, "must be a string");
  });
  return v as string[];
}

/** Function tools, and the hosted tools left out (by name, for tool_choice). */
function toolsOf(v: unknown, left: LeftOut): { tools: Json[]; hosted: Set<string> } {
  if (!Array.isArray(v)) throw fieldError("tools", "must be a list of tools");
  const tools: Json[] = [];
  const hosted = new Set<string>();
  v.forEach((t: unknown, i) => {
    const f = `tools[${i}]`;
    if (!isObject(t)) throw fieldError(f, "must be an object");
    if (!absent(t.type) && t.type !== "custom") {
      if (typeof t.type !== "string" || !isHostedTool(t.type))
        throw fieldError(`${f}.type`, `must be "custom" (or left out), or a hosted tool's dated type`);
      left.add(`tools[${t.type}]`);
      if (typeof t.name === "string") hosted.add(t.name);
      return;
    }
    const name = stringField(t.name, `${f}.name`, 256);
    if (!isObject(t.input_schema)) throw fieldError(`${f}.input_schema`, "required: a JSON Schema object");
    if (!absent(t.description) && typeof t.description !== "string")
      throw fieldError(`${f}.description`, "must be a string");
    if (!absent(t.strict) && typeof t.strict !== "boolean")
      throw fieldError(`${f}.strict`, "must be a boolean");
    left.extras(t, TOOL_KEYS, "tools");
    tools.push({
      type: "function",
      function: {
        name,
        ...(typeof t.description === "string" ? { description: t.description } : {}),
        parameters: t.input_schema,
        ...(typeof t.strict === "boolean" ? { strict: t.strict } : {}),
      },
    });
  });
  return { tools, hosted };
}

/**
 * tool_choice auto / any / none / tool → "auto" / "required" / "none" / a named function;
 * `disable_parallel_tool_use: true` → `parallel_tool_calls: false`. A choice that forces a tool
 * the translation left out (a hosted one), or any tool when none is left, is left out with them.
 */
function toolChoiceOf(v: unknown, tools: Json[], hosted: Set<string>, out: ChatBody, left: LeftOut): void {
  if (!isObject(v)) throw fieldError("tool_choice", "must be an object");
  left.extras(v, TOOL_CHOICE_KEYS, "tool_choice");
  if (!absent(v.disable_parallel_tool_use) && typeof v.disable_parallel_tool_use !== "boolean")
    throw fieldError("tool_choice.disable_parallel_tool_use", "must be a boolean");
  let choice: unknown;
  switch (v.type) {
    case "auto":
      choice = "auto";
      break;
    case "none":
      choice = "none";
      break;
    case "any":
      choice = "required";
      break;
    case "tool": {
      const name = stringField(v.name, "tool_choice.name", 256);
      if (hosted.has(name)) {
        left.add("tool_choice");
        return;
      }
      if (!tools.some((t) => (t.function as Json).name === name))
        throw fieldError("tool_choice.name", `no tool named "${name}" in tools`);
      choice = { type: "function", function: { name } };
      break;
    }
    default:
      throw fieldError("tool_choice.type", `must be "auto", "any", "none" or "tool"`);
  }
  if (tools.length === 0) {
    if (choice === "required") left.add("tool_choice");
    return;
  }
  out.tool_choice = choice;
  if (v.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
}

/** thinking enabled → reasoning.max_tokens (the budget); adaptive → reasoning enabled; disabled → none. */
function reasoningOf(v: unknown, left: LeftOut): Json | undefined {
  if (!isObject(v)) throw fieldError("thinking", "must be an object");
  left.extras(v, THINKING_KEYS, "thinking");
  switch (v.type) {
    case "enabled":
      return { max_tokens: integerFrom(v.budget_tokens, "thinking.budget_tokens", 1) };
    case "adaptive":
      return { enabled: true };
    case "disabled":
      return undefined;
    default:
      throw fieldError("thinking.type", `must be "enabled", "adaptive" or "disabled"`);
  }
}

/** The router's provider preferences, checked for the shapes the attempt planner reads. */
function providerOf(v: unknown): ProviderPrefs {
  if (!isObject(v)) throw fieldError("provider", "must be an object");
  for (const k of ["order", "only", "ignore"]) if (!absent(v[k])) strings(v[k], `provider.${k}`);
  for (const k of ["allow_fallbacks", "require_parameters"])
    if (!absent(v[k]) && typeof v[k] !== "boolean") throw fieldError(`provider.${k}`, "must be a boolean");
  if (!absent(v.max_price) && !isObject(v.max_price))
    throw fieldError("provider.max_price", "must be an object");
  return v;
}

/** The fallback models: the router's `models`, or Anthropic-style `fallbacks: [{model}]` (at most 3). */
function modelsOf(b: Json): string[] | undefined {
  if (!absent(b.models) && !absent(b.fallbacks)) throw fieldError("fallbacks", "cannot be sent with models");
  if (!absent(b.models)) {
    const models = strings(b.models, "models");
    if (models.length === 0 || models.length > MAX_MODELS)
      throw fieldError("models", `must list 1 to ${MAX_MODELS} model ids`);
    models.forEach((m, i) => stringField(m, `models[${i}]`, 256));
    return models;
  }
  if (absent(b.fallbacks)) return undefined;
  if (!Array.isArray(b.fallbacks) || b.fallbacks.length === 0 || b.fallbacks.length > 3)
    throw fieldError("fallbacks", "must list 1 to 3 {model} objects");
  return b.fallbacks.map((f: unknown, i) => {
    if (!isObject(f)) throw fieldError(`fallbacks[${i}]`, "must be an object");
    return stringField(f.model, `fallbacks[${i}].model`, 256);
  });
}

export function messagesToChat(body: unknown): { chat: ChatBody; leftOut: string[] } {
  if (!isObject(body)) throw fieldError("body", "must be a JSON object");
  const left = new LeftOut();
  for (const key in body) if (!TRANSLATED.has(key) && !absent(body[key])) left.add(key);
  const model = stringField(body.model, "model", 256);
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw fieldError("messages", "required: a non-empty list of messages");
  if (body.messages.length > MAX_MESSAGES) throw fieldError("messages", `at most ${MAX_MESSAGES} messages`);
  const chat: ChatBody = { model, messages: turnsToChat(body.system, body.messages, left) };

  if (!absent(body.max_tokens)) chat.max_tokens = integerFrom(body.max_tokens, "max_tokens", 1, MAX_TOKENS);
  if (!absent(body.stream)) {
    if (typeof body.stream !== "boolean") throw fieldError("stream", "must be a boolean");
    chat.stream = body.stream;
  }
  // Anthropic's sampling ranges: temperature and top_p 0-1, top_k a count.
  if (!absent(body.temperature)) chat.temperature = numberIn(body.temperature, "temperature", 0, 1);
  if (!absent(body.top_p)) chat.top_p = numberIn(body.top_p, "top_p", 0, 1);
  if (!absent(body.top_k)) chat.top_k = integerFrom(body.top_k, "top_k", 0);
  if (!absent(body.stop_sequences)) {
    const stop = strings(body.stop_sequences, "stop_sequences");
    if (stop.length > 0) chat.stop = stop;
  }
  if (!absent(body.tools)) {
    const { tools, hosted } = toolsOf(body.tools, left);
    if (tools.length > 0) chat.tools = tools;
    if (!absent(body.tool_choice)) toolChoiceOf(body.tool_choice, tools, hosted, chat, left);
  } else if (!absent(body.tool_choice)) {
    toolChoiceOf(body.tool_choice, [], new Set(), chat, left);
  }
  if (!absent(body.thinking)) {
    const reasoning = reasoningOf(body.thinking, left);
    if (reasoning) chat.reasoning = reasoning;
  }

  // The router's extras, as the chat surface takes them.
  const models = modelsOf(body);
  if (models) chat.models = models;
  if (!absent(body.provider)) chat.provider = providerOf(body.provider);
  if (!absent(body.session_id)) chat.session_id = stringField(body.session_id, "session_id", 256);
  if (!absent(body.trace)) {
    if (!isObject(body.trace)) throw fieldError("trace", "must be an object");
    chat.trace = body.trace;
  }
  // Who the end user is: the router's `user`, else Anthropic's metadata.user_id.
  if (!absent(body.metadata)) {
    if (!isObject(body.metadata)) throw fieldError("metadata", "must be an object");
    left.extras(body.metadata, METADATA_KEYS, "metadata");
    if (!absent(body.metadata.user_id) && body.metadata.user_id !== "")
      chat.user = stringField(body.metadata.user_id, "metadata.user_id", 1024);
  }
  if (!absent(body.user)) chat.user = stringField(body.user, "user", 1024);
  return { chat, leftOut: left.list() };
}
