import { UpstreamError, type UpstreamCall } from "../provider.js";

/**
 * An OpenAI chat request → an Anthropic Messages request (POST /v1/messages).
 *
 * - system and developer messages, wherever they are, become the top-level `system` (Anthropic
 *   has no system role), in order; an empty or blank one is left out;
 * - text blocks that are empty or blank are left out of a list of blocks (Anthropic refuses them:
 *   "text content blocks must be non-empty" / "must contain non-whitespace text");
 * - user content parts: text → text blocks, image_url → image blocks (a `data:` URL → a base64
 *   source, http(s) → a url source);
 * - assistant tool_calls → tool_use blocks (arguments parsed: Anthropic wants an object), after
 *   the thinking blocks its reasoning_details carry (signed text, or encrypted);
 * - tool messages → tool_result blocks in a user turn (consecutive results share one turn);
 * - tools → {name, description, input_schema} (`type: "object"` added when the schema has none);
 *   tool_choice auto/none/required/{function} →
 *   auto/none/any/tool; parallel_tool_calls:false → disable_parallel_tool_use;
 * - max_tokens (required by Anthropic): max_completion_tokens, else max_tokens, else the
 *   endpoint's maximum; stop → stop_sequences; temperature (at most 1), top_p, top_k, as
 *   Anthropic takes them with or without thinking (`sampling`); user → metadata.user_id;
 *   reasoning.max_tokens → thinking with that budget; reasoning.effort (or enabled) → a budget
 *   that share of max_tokens.
 * Anything it cannot express is the client's error: UpstreamError 400 naming the field, not
 * retryable (another provider would get the same request).
 */
type Json = Record<string, unknown>;

/** Used only when neither the request nor the catalog gives a completion limit. */
const FALLBACK_MAX_TOKENS = 4096;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function invalid(field: string, problem: string): UpstreamError {
  return new UpstreamError(`${field}: ${problem}`, 400, false);
}

/** Text of a system/tool message: a string or text parts joined. */
function plainText(content: unknown, field: string): string {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (!Array.isArray(content)) throw invalid(field, "must be a string or a list of parts");
  return content
    .map((p: unknown, j) => {
      if (isObject(p) && p.type === "text" && typeof p.text === "string") return p.text;
      throw invalid(`${field}[${j}]`, "only text parts are allowed here");
    })
    .join("\n");
}

const DATA_URL = /^data:(image\/(?:jpeg|png|gif|webp));base64,(.+)$/s;

function userPart(p: unknown, field: string): Json {
  if (!isObject(p)) throw invalid(field, "must be an object");
  if (p.type === "text" && typeof p.text === "string") return { type: "text", text: p.text };
  if (p.type === "image_url") {
    const raw = isObject(p.image_url) ? p.image_url.url : p.image_url;
    if (typeof raw !== "string") throw invalid(`${field}.image_url.url`, "required");
    const data = DATA_URL.exec(raw);
    if (data) return { type: "image", source: { type: "base64", media_type: data[1], data: data[2] } };
    if (/^https?:\/\//.test(raw)) return { type: "image", source: { type: "url", url: raw } };
    throw invalid(
      `${field}.image_url.url`,
      "must be an http(s) URL or a base64 data URL of a jpeg, png, gif or webp image",
    );
  }
  throw invalid(`${field}.type`, `${JSON.stringify(p.type)} is not supported by this provider`);
}

const blank = (text: string): boolean => text.trim() === "";

function userContent(content: unknown, field: string): string | Json[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalid(field, "must be a string or a list of parts");
  const blocks = content.map((p: unknown, j) => userPart(p, `${field}[${j}]`));
  const kept = blocks.filter((b) => !(b.type === "text" && blank(b.text as string)));
  return kept.length > 0 ? kept : blocks; // only blank text: refused either way
}

/** How reasoning_details name Anthropic's thinking (the hosted original's format tag). */
export const ANTHROPIC_REASONING_FORMAT = "anthropic-claude-v1";

/**
 * An earlier answer's `reasoning_details` → the thinking blocks Anthropic wants back at the start
 * of that assistant turn (it refuses a tool-use turn without them while thinking is on). Pieces
 * of one block (as a stream delivers them, keyed by `index`) are joined. Only Anthropic's own
 * blocks can go back: a text block needs its signature, and another provider's format is left out.
 */
function thinkingBlocks(details: unknown, field: string): Json[] {
  if (details === undefined || details === null) return [];
  if (!Array.isArray(details)) throw invalid(field, "must be a list");
  const byIndex = new Map<number, Json>();
  details.forEach((d: unknown, j) => {
    if (!isObject(d)) throw invalid(`${field}[${j}]`, "must be an object");
    if (d.format !== undefined && d.format !== null && d.format !== ANTHROPIC_REASONING_FORMAT) return;
    const at = typeof d.index === "number" ? d.index : j;
    const block = byIndex.get(at);
    if (d.type === "reasoning.encrypted" && typeof d.data === "string") {
      byIndex.set(at, { type: "redacted_thinking", data: d.data });
    } else if (d.type === "reasoning.text") {
      const text = typeof d.text === "string" ? d.text : "";
      const signature = typeof d.signature === "string" && d.signature !== "" ? d.signature : null;
      if (block?.type === "thinking") {
        block.thinking = `${block.thinking as string}${text}`;
        if (signature !== null) block.signature = signature;
      } else byIndex.set(at, { type: "thinking", thinking: text, signature });
    }
  });
  return [...byIndex.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, b]) => b)
    .filter((b) => b.type === "redacted_thinking" || b.signature !== null);
}

function assistantContent(m: Json, field: string): string | Json[] {
  const text = m.content === null || m.content === undefined ? "" : plainText(m.content, `${field}.content`);
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  const thinking = thinkingBlocks(m.reasoning_details, `${field}.reasoning_details`);
  if (calls.length === 0 && thinking.length === 0) return text;
  const blocks: Json[] = [...thinking, ...(blank(text) ? [] : [{ type: "text", text }])];
  calls.forEach((c: unknown, j) => {
    const f = `${field}.tool_calls[${j}]`;
    if (!isObject(c) || !isObject(c.function)) throw invalid(`${f}.function`, "required");
    if (typeof c.id !== "string") throw invalid(`${f}.id`, "required");
    if (typeof c.function.name !== "string") throw invalid(`${f}.function.name`, "required");
    let input: unknown = {};
    const args = c.function.arguments;
    // The OpenAI shape: the arguments as JSON text. Anything else was dropped for {} before.
    if (args !== undefined && args !== null && typeof args !== "string") {
      throw invalid(`${f}.function.arguments`, "must be a string (the arguments as JSON text)");
    }
    if (typeof args === "string" && args.trim() !== "") {
      try {
        input = JSON.parse(args);
      } catch {
        throw invalid(`${f}.function.arguments`, "must be a JSON object");
      }
    }
    if (!isObject(input)) throw invalid(`${f}.function.arguments`, "must be a JSON object");
    blocks.push({ type: "tool_use", id: c.id, name: c.function.name, input });
  });
  return blocks;
}

function translateMessages(messages: unknown[]): { system: Json[]; messages: Json[] } {
  const system: Json[] = [];
  const out: Json[] = [];
  messages.forEach((m: unknown, i) => {
    const field = `messages[${i}]`;
    if (!isObject(m)) throw invalid(field, "must be an object");
    switch (m.role) {
      case "system":
      case "developer": {
        const text = plainText(m.content, `${field}.content`);
        if (!blank(text)) system.push({ type: "text", text });
        return;
      }
      case "user":
        out.push({ role: "user", content: userContent(m.content, `${field}.content`) });
        return;
      case "assistant":
        out.push({ role: "assistant", content: assistantContent(m, field) });
        return;
      case "tool": {
        if (typeof m.tool_call_id !== "string") throw invalid(`${field}.tool_call_id`, "required");
        const result = {
          type: "tool_result",
          tool_use_id: m.tool_call_id,
          content: plainText(m.content, `${field}.content`),
        };
        const prev = out[out.length - 1];
        const prevBlocks = prev?.content;
        if (
          prev?.role === "user" &&
          Array.isArray(prevBlocks) &&
          prevBlocks.every((b: Json) => b.type === "tool_result")
        ) {
          prevBlocks.push(result);
        } else {
          out.push({ role: "user", content: [result] });
        }
        return;
      }
      default:
        throw invalid(`${field}.role`, `${JSON.stringify(m.role)} is not supported by this provider`);
    }
  });
  return { system, messages: out };
}

function translateTools(tools: unknown[]): Json[] {
  return tools.map((t: unknown, i) => {
    const f = `tools[${i}]`;
    if (!isObject(t) || t.type !== "function" || !isObject(t.function))
      throw invalid(f, "only function tools are supported");
    if (typeof t.function.name !== "string") throw invalid(`${f}.function.name`, "required");
    // Anthropic requires the input schema's `type: "object"`; OpenAI takes a schema without it
    // (`parameters: {}`), which describes the same object arguments.
    return {
      name: t.function.name,
      ...(typeof t.function.description === "string" ? { description: t.function.description } : {}),
      input_schema: isObject(t.function.parameters)
        ? { type: "object", ...t.function.parameters }
        : { type: "object", properties: {} },
    };
  });
}

function translateToolChoice(choice: unknown, parallel: unknown): Json | undefined {
  let out: Json | undefined;
  if (choice === undefined || choice === null || choice === "auto") out = { type: "auto" };
  else if (choice === "none") return { type: "none" };
  else if (choice === "required") out = { type: "any" };
  else if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === "string") {
    out = { type: "tool", name: choice.function.name };
  } else throw invalid("tool_choice", "must be auto, none, required or {type: function, function: {name}}");
  if (parallel === false) out.disable_parallel_tool_use = true;
  return out;
}

/** Anthropic's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

/**
 * The thinking budget Anthropic accepts for `reasoning.max_tokens`: at least 1024 (a smaller one is
 * raised to it, as a budget is a ceiling, not a target) and below `max_tokens`, which the thinking
 * counts in. One that cannot be below `max_tokens` is refused before anything is sent.
 */
function thinkingBudget(asked: number, maxTokens: number): number {
  const budget = Math.max(MIN_THINKING_BUDGET, Math.floor(asked));
  if (budget >= maxTokens) {
    throw invalid(
      "reasoning.max_tokens",
      `a thinking budget of ${budget} tokens must be below max_tokens (${maxTokens}); Anthropic's smallest budget is ${MIN_THINKING_BUDGET}: raise max_tokens or lower the budget`,
    );
  }
  return budget;
}

/**
 * Shares of max_tokens a `reasoning.effort` thinks with (the hosted original's mapping for models
 * that take a budget), the result kept between 1024 and 32000 tokens; `enabled: true` alone is
 * medium.
 */
export const EFFORT_SHARE: Record<string, number> = {
  max: 0.95,
  xhigh: 0.9,
  high: 0.8,
  medium: 0.5,
  low: 0.2,
  minimal: 0.1,
};
const MAX_EFFORT_BUDGET = 32_000;

/** The thinking a request's `reasoning` asks for, as Anthropic's `thinking`; undefined for none. */
function thinkingOf(reasoning: unknown, maxTokens: number): Json | undefined {
  if (reasoning === undefined || reasoning === null) return undefined;
  if (!isObject(reasoning)) throw invalid("reasoning", "must be an object");
  if (reasoning.enabled === false || reasoning.effort === "none") return undefined;
  if (typeof reasoning.max_tokens === "number" && reasoning.max_tokens > 0) {
    return { type: "enabled", budget_tokens: thinkingBudget(reasoning.max_tokens, maxTokens) };
  }
  const effort = reasoning.effort ?? (reasoning.enabled === true ? "medium" : undefined);
  if (effort === undefined || effort === null) return undefined;
  const share = typeof effort === "string" ? EFFORT_SHARE[effort] : undefined;
  if (share === undefined)
    throw invalid("reasoning.effort", `must be one of ${Object.keys(EFFORT_SHARE).join(", ")} or none`);
  const budget = Math.max(MIN_THINKING_BUDGET, Math.min(Math.floor(maxTokens * share), MAX_EFFORT_BUDGET));
  if (budget >= maxTokens) {
    throw invalid(
      "reasoning.effort",
      `thinking needs max_tokens above Anthropic's smallest budget (${MIN_THINKING_BUDGET}); max_tokens is ${maxTokens}`,
    );
  }
  return { type: "enabled", budget_tokens: budget };
}

/**
 * What a native Messages request keeps of the client's body: everything but the router's own
 * fields (fallbacks, provider preferences, attribution), which Anthropic does not know.
 */
const ROUTER_FIELDS = new Set([
  "models",
  "fallbacks",
  "provider",
  "plugins",
  "session_id",
  "trace",
  "user",
  "safeguards",
  "stop_server_tools_when",
  "debug",
  "route",
  "transforms",
  "usage",
]);

/** A system message's content as text blocks (a string is one block). */
const systemBlocks = (content: unknown): unknown[] =>
  typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];

/**
 * `role: "system"` messages (API version 2026-10-21, which Claude Code sends) moved into the
 * top-level `system`, after its own blocks and in order: the version Gatehouse calls Anthropic
 * with (ANTHROPIC_VERSION) knows no system role inside `messages` and refuses the request. Their
 * blocks (cache_control included) are kept as they are.
 */
function hoistSystemMessages(req: Json): void {
  if (!Array.isArray(req.messages)) return;
  const messages = req.messages as unknown[];
  const system = messages.filter((m) => isObject(m) && m.role === "system") as Json[];
  if (system.length === 0) return;
  req.messages = messages.filter((m) => !(isObject(m) && m.role === "system"));
  req.system = [...systemBlocks(req.system), ...system.flatMap((m) => systemBlocks(m.content))];
}

/** A Messages request forwarded as the client sent it (UpstreamCall.native). */
function nativeRequest(call: UpstreamCall, native: Json, stream: boolean): Json {
  const req: Json = {};
  for (const [k, v] of Object.entries(native)) if (!ROUTER_FIELDS.has(k)) req[k] = v;
  hoistSystemMessages(req);
  req.model = call.upstreamModel;
  // The completion cap the hold reserved (capMaxTokens): never more than was reserved.
  req.max_tokens = call.body.max_tokens ?? call.maxCompletionTokens ?? FALLBACK_MAX_TOKENS;
  req.stream = stream;
  return req;
}

export function toAnthropicRequest(call: UpstreamCall, stream: boolean): Json {
  if (call.native?.kind === "anthropic") return nativeRequest(call, call.native.body, stream);
  const b = call.body;
  if (!Array.isArray(b.messages)) throw invalid("messages", "required");
  const { system, messages } = translateMessages(b.messages);
  const maxTokens =
    b.max_completion_tokens ?? b.max_tokens ?? call.maxCompletionTokens ?? FALLBACK_MAX_TOKENS;
  const req: Json = { model: call.upstreamModel, max_tokens: maxTokens, messages, stream };
  if (system.length > 0) req.system = system;
  if (typeof b.stop === "string") req.stop_sequences = [b.stop];
  else if (Array.isArray(b.stop) && b.stop.length > 0) req.stop_sequences = b.stop;
  if (typeof b.user === "string" && b.user !== "") req.metadata = { user_id: b.user };
  if (Array.isArray(b.tools) && b.tools.length > 0) {
    req.tools = translateTools(b.tools);
    req.tool_choice = translateToolChoice(b.tool_choice, b.parallel_tool_calls);
  }
  // OpenAI's own top-level `reasoning_effort` is read as `reasoning.effort`.
  const reasoning =
    b.reasoning ?? (typeof b.reasoning_effort === "string" ? { effort: b.reasoning_effort } : undefined);
  const thinking = thinkingOf(reasoning, maxTokens);
  if (thinking) req.thinking = thinking;
  Object.assign(req, sampling(b, thinking !== undefined));
  if (thinking && isObject(req.tool_choice) && FORCED_TOOL_CHOICES.has(req.tool_choice.type as string)) {
    throw invalid(
      "tool_choice",
      "Anthropic cannot force a tool call while thinking is on: use auto or none, or leave reasoning off",
    );
  }
  return req;
}

/** Anthropic's tool choices that force a call, which it refuses with thinking on. */
const FORCED_TOOL_CHOICES = new Set(["any", "tool"]);
/** The lowest `top_p` Anthropic takes with thinking on. */
export const MIN_THINKING_TOP_P = 0.95;

/**
 * The sampling parameters Anthropic takes. Its temperature runs 0-1 where OpenAI's runs 0-2: a
 * higher one is sent as 1. With thinking on it takes no temperature but 1 and no `top_k`, so both
 * are left out (thinking was asked for explicitly; its sampling is Anthropic's default), and a
 * `top_p` below 0.95 is raised to 0.95.
 */
function sampling(b: UpstreamCall["body"], thinking: boolean): Json {
  const out: Json = {};
  if (typeof b.top_p === "number") out.top_p = thinking ? Math.max(b.top_p, MIN_THINKING_TOP_P) : b.top_p;
  if (thinking) return out;
  if (typeof b.temperature === "number") out.temperature = Math.min(b.temperature, 1);
  if (typeof b.top_k === "number") out.top_k = b.top_k;
  return out;
}
