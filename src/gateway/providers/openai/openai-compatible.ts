import {
  UpstreamError,
  type ProviderAdapter,
  type ProviderChoice,
  type ProviderChunk,
  type ProviderCompletion,
  type ProviderUsage,
  type MaxTokensField,
  type UpstreamCall,
} from "../provider.js";
import { malformed } from "../malformed.js";
import { openAIEmbed } from "./openai-embeddings.js";
import { inBandError, isObject, parseJson, type Json } from "./openai-json.js";
import { sseEvents } from "../sse-events.js";
import { fromResponsesResult, ResponsesEvents } from "./responses-answer.js";
import { nativeResponsesBody } from "./responses-request.js";
import {
  createUpstreamPool,
  readWholeBody,
  sendUpstream,
  sentCredentials,
  withoutSecrets,
  type UpstreamExchange,
} from "../upstream-http.js";
import type { CancelSignal } from "../../cancellation.js";

/**
 * OpenAI's chat-completions wire format, spoken by OpenAI, Groq, DeepInfra, Together, Fireworks,
 * Mistral, Ollama, vLLM and llama.cpp's server: POST {base}/chat/completions with a bearer key.
 * The gateway already speaks this shape, so the request passes through (model replaced, usage
 * always asked for in streams) and the answer is normalised: null fields dropped from stream
 * deltas (the SDK rejects them), `reasoning_content` (vLLM, DeepSeek) read as `reasoning`, content
 * sent as a list of parts (Mistral's reasoning models) read as its text (contentParts).
 * Embeddings go to POST {base}/embeddings on the same connections (openai-embeddings.ts). A
 * native Responses request (UpstreamCall.native of kind `openai-responses`, given only to a
 * provider that declares `responses: true`) goes to POST {base}/responses as the client sent it
 * (responses-request.ts), its answer read into the same chat shape (responses-answer.ts).
 */
export interface UpstreamEndpointOptions {
  /** e.g. https://api.openai.com/v1 (no trailing /chat/completions). */
  baseUrl: string;
  /** null: no Authorization header (Ollama, a local vLLM). */
  apiKey: string | null;
  /** Extra headers sent on every request (never logged: they may hold credentials). */
  headers?: Record<string, string>;
  /** Silence allowed between two chunks once the answer has started. Default 120 s. */
  idleTimeoutMs?: number;
  /** Connections kept per origin. Default 128. */
  connections?: number;
  /**
   * The field that carries the completion cap upstream. Default: as the client sent it (the
   * gateway sends `max_tokens` when it sent none). `max_completion_tokens` for an upstream that
   * refuses `max_tokens` (OpenAI's reasoning models): the cap is sent in that field only.
   */
  maxTokensField?: MaxTokensField;
}

export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, "") + path;
}

export function createOpenAICompatibleAdapter(opts: UpstreamEndpointOptions): ProviderAdapter {
  const pool = createUpstreamPool({
    idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    connections: opts.connections,
  });
  const url = joinUrl(opts.baseUrl, "/chat/completions");
  const responsesUrl = joinUrl(opts.baseUrl, "/responses");
  const embeddings = {
    url: joinUrl(opts.baseUrl, "/embeddings"),
    apiKey: opts.apiKey,
    headers: opts.headers,
  };
  /** A copy of the body to send, its completion cap in the field the upstream takes. */
  const completionField = (b: UpstreamCall["body"]): Record<string, unknown> => {
    if (opts.maxTokensField !== "max_completion_tokens" || b.max_tokens === undefined) return { ...b };
    const { max_tokens: cap, ...rest } = b;
    return { ...rest, max_completion_tokens: rest.max_completion_tokens ?? cap };
  };

  /** The chat request's body, or a native Responses request's (the same connections either way). */
  const requestOf = (call: UpstreamCall, stream: boolean): { url: string; body: Record<string, unknown> } => {
    if (call.native?.kind === "openai-responses")
      return { url: responsesUrl, body: nativeResponsesBody(call, call.native.body, stream) };
    const body: Record<string, unknown> = completionField(call.body);
    body.model = call.upstreamModel;
    body.stream = stream;
    if (stream) {
      const asked = call.body.stream_options;
      body.stream_options = { ...(asked && typeof asked === "object" ? asked : {}), include_usage: true };
    } else {
      delete body.stream_options; // OpenAI rejects stream_options without stream
    }
    if (body.reasoning !== undefined || body.include_reasoning !== undefined) routerReasoning(body);
    return { url, body };
  };

  const send = (call: UpstreamCall, stream: boolean, signal: CancelSignal): Promise<UpstreamExchange> => {
    const { url, body } = requestOf(call, stream);
    // The organization's own key (BYOK) when the attempt has one, else the provider's.
    const apiKey = call.apiKey ?? opts.apiKey;
    return sendUpstream(
      pool,
      {
        url,
        headers: {
          ...opts.headers,
          "content-type": "application/json",
          accept: stream ? "text/event-stream" : "application/json",
          ...(apiKey !== null ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        firstByteTimeoutMs: call.timeoutMs,
      },
      signal,
    );
  };

  /** A native Responses stream, its events read into chunks (responses-answer.ts). */
  async function* streamResponses(call: UpstreamCall, signal: CancelSignal): AsyncIterable<ProviderChunk> {
    try {
      const exchange = await send(call, true, signal);
      const events = new ResponsesEvents();
      try {
        for await (const event of sseEvents(exchange, () => events.output)) {
          if (event.data === "[DONE]") break;
          const chunk = events.next(event.event, parseJson(event.data, events.output));
          if (chunk) yield chunk;
          if (events.done) break;
        }
        if (!events.done) throw malformed("the stream ended before response.completed", events.output);
      } finally {
        exchange.close(events.done);
      }
    } catch (err) {
      throw withoutSecrets(err, sentCredentials(call, opts));
    }
  }

  return {
    async complete(call, signal) {
      try {
        const text = await readWholeBody(await send(call, false, signal));
        if (call.native?.kind === "openai-responses") return fromResponsesResult(parseJson(text, false));
        return parseCompletion(text);
      } catch (err) {
        throw withoutSecrets(err, sentCredentials(call, opts));
      }
    },

    async *stream(call, signal) {
      if (call.native?.kind === "openai-responses") {
        yield* streamResponses(call, signal);
        return;
      }
      try {
        const exchange = await send(call, true, signal);
        let output = false;
        let finished = false;
        const toolCalls = new ToolCallSlots();
        try {
          for await (const event of sseEvents(exchange, () => output)) {
            if (event.data === "[DONE]") {
              finished = true;
              break;
            }
            if (event.event === "error") throw errorEvent(event.data, output);
            const chunk = parseChunk(event.data, output, toolCalls);
            if (chunk.choices.some((c) => c.finish_reason !== null)) finished = true;
            output = true;
            yield chunk;
          }
          if (!finished) throw malformed("the stream ended before its last chunk", output);
        } finally {
          exchange.close(finished);
        }
      } catch (err) {
        throw withoutSecrets(err, sentCredentials(call, opts));
      }
    },

    embed: (call, signal) => openAIEmbed(pool, embeddings, call, signal),

    async close() {
      await pool.close();
    },
  };
}

/**
 * OpenAI usage → port usage; null when absent or not an object. `prompt_tokens` counts the cached
 * tokens and the cache writes; `prompt_tokens_details.cache_write_tokens` is reported by some
 * upstreams only (routers that serve Anthropic's models), 0 elsewhere.
 */
export function openAIUsage(u: unknown): ProviderUsage | null {
  if (!isObject(u)) return null;
  const num = (v: unknown): number =>
    typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0;
  const prompt = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const completion = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {};
  return {
    promptTokens: num(u.prompt_tokens),
    completionTokens: num(u.completion_tokens),
    cachedTokens: num(prompt.cached_tokens),
    cacheWriteTokens: num(prompt.cache_write_tokens),
    reasoningTokens: num(completion.reasoning_tokens),
  };
}

/**
 * An event named `error` (`event: error` with its data, or llama.cpp's `error: {…}` line, whose
 * object is the error itself: `{"code":400,"message":…}`): always a failure, with its code.
 */
function errorEvent(data: string, afterOutput: boolean): UpstreamError {
  let o: unknown = data;
  try {
    o = JSON.parse(data);
  } catch {
    // a plain-text message
  }
  const error = isObject(o) ? (o.error ?? o) : data.trim() || "error";
  return (
    inBandError({ error }, afterOutput) ?? new UpstreamError("upstream reported an error", null, !afterOutput)
  );
}

function parseCompletion(text: string): ProviderCompletion {
  const o = parseJson(text, false);
  const error = inBandError(o, false);
  if (error) throw error;
  if (!Array.isArray(o.choices)) throw malformed("no choices", false);
  const choices = o.choices.map((c: unknown, i): ProviderChoice => {
    if (!isObject(c) || !isObject(c.message)) throw malformed(`choices[${i}] has no message`, false);
    const m = c.message;
    let reasoning = m.reasoning ?? m.reasoning_content;
    let content = typeof m.content === "string" ? m.content : null;
    if (content === null && m.content !== null && m.content !== undefined) {
      const parts = contentParts(m.content);
      content = parts.text;
      reasoning = withReasoning(reasoning, parts.reasoning);
    }
    return {
      index: typeof c.index === "number" ? c.index : i,
      message: {
        role: "assistant",
        content,
        ...(Array.isArray(m.tool_calls) && m.tool_calls.length > 0
          ? { tool_calls: m.tool_calls.map((t: unknown, j) => wholeToolCall(t, i, j)) }
          : {}),
        ...(typeof reasoning === "string" ? { reasoning } : {}),
        ...(Array.isArray(m.reasoning_details) && m.reasoning_details.length > 0
          ? { reasoning_details: m.reasoning_details }
          : {}),
        ...(typeof m.refusal === "string" ? { refusal: m.refusal } : {}),
      },
      finish_reason: typeof c.finish_reason === "string" ? c.finish_reason : null,
      ...logprobsOf(c),
    };
  });
  return { upstreamId: typeof o.id === "string" ? o.id : null, choices, usage: openAIUsage(o.usage) };
}

/**
 * A whole answer's tool call as the SDK requires it: `id`, `type: "function"`, and the function's
 * `name` and `arguments` as strings. Mistral's API leaves `type` out, other servers send it null
 * or send no `id`; arguments sent as an object are its JSON, and none are `{}` (no input).
 */
function wholeToolCall(t: unknown, choice: number, n: number): Json {
  const c = isObject(t) ? t : {};
  const f = isObject(c.function) ? c.function : {};
  const args = f.arguments;
  return {
    ...withoutNulls(c),
    id: typeof c.id === "string" ? c.id : `call_${choice}_${n}`,
    type: "function",
    function: {
      ...withoutNulls(f),
      name: typeof f.name === "string" ? f.name : "",
      arguments:
        typeof args === "string" ? args : args === undefined || args === null ? "{}" : JSON.stringify(args),
    },
  };
}

/**
 * A choice's `logprobs` (sent when the request asked for them), for the SDK: an object whose
 * `content` is present (a list, or null); absent when the upstream sent none. Each token has the
 * `bytes` (a list, or null) and `top_logprobs` (a list) the SDK requires: Ollama leaves out
 * `top_logprobs` when none were asked for, and `bytes` in its first versions (its fields are
 * `omitempty`).
 */
function logprobsOf(c: Json): { logprobs?: Json } {
  const l = c.logprobs;
  if (!isObject(l)) return {};
  const out: Json = { ...l, content: Array.isArray(l.content) ? l.content.map(tokenLogprob) : null };
  if (Array.isArray(l.refusal)) out.refusal = l.refusal.map(tokenLogprob);
  return { logprobs: out };
}

/** One token's log probability, with `bytes` and `top_logprobs` (each alternative's `bytes` too). */
function tokenLogprob(t: unknown): unknown {
  if (!isObject(t)) return t;
  const top = Array.isArray(t.top_logprobs) ? t.top_logprobs : [];
  return {
    ...t,
    bytes: Array.isArray(t.bytes) ? t.bytes : null,
    top_logprobs: top.map((a: unknown) =>
      isObject(a) ? { ...a, bytes: Array.isArray(a.bytes) ? a.bytes : null } : a,
    ),
  };
}

function parseChunk(data: string, afterOutput: boolean, toolCalls: ToolCallSlots): ProviderChunk {
  const o = parseJson(data, afterOutput);
  const error = inBandError(o, afterOutput);
  if (error) throw error;
  const rawChoices = o.choices ?? [];
  if (!Array.isArray(rawChoices)) throw malformed("chunk choices is not a list", afterOutput);
  const choices = rawChoices.map((c: unknown, i) => {
    if (!isObject(c)) throw malformed(`chunk choices[${i}] is not an object`, afterOutput);
    const index = typeof c.index === "number" ? c.index : i;
    const delta = cleanDelta(isObject(c.delta) ? c.delta : {});
    if (Array.isArray(delta.tool_calls)) delta.tool_calls = toolCalls.deltas(index, delta.tool_calls);
    return {
      index,
      delta,
      finish_reason: typeof c.finish_reason === "string" ? c.finish_reason : null,
      ...logprobsOf(c),
    };
  });
  return { upstreamId: typeof o.id === "string" ? o.id : null, choices, usage: openAIUsage(o.usage) };
}

/**
 * Drops null fields (the SDK's chunk schema rejects them), names reasoning `reasoning`, and turns
 * content that is not a string (a list of parts) into the string the SDK requires of a delta.
 */
function cleanDelta(d: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(d)) {
    if (v === null || v === undefined) continue;
    if (k === "reasoning_content") out.reasoning ??= v;
    else out[k] = v;
  }
  if (out.content !== undefined && typeof out.content !== "string") {
    const parts = contentParts(out.content);
    delete out.content;
    if (parts.text !== null) out.content = parts.text;
    const reasoning = withReasoning(out.reasoning, parts.reasoning);
    if (reasoning !== undefined) out.reasoning = reasoning;
  }
  return out;
}

/** A string that says something, else null. */
const nonEmpty = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/**
 * Tool-call deltas as the SDK takes them: each with the integer `index` of its call (required),
 * and no null field (`"id": null` or `"function": {"name": null}` in a continuation, as SGLang
 * sends them, fail the SDK's chunk schema). Servers that number calls badly are renumbered: no
 * `index` at all (Ollama before 0.4.7, Gemini's OpenAI endpoint), where a new `id` is a new call
 * and a piece with neither continues the last one; and every call numbered 0 (Ollama's parallel
 * calls), where a new `id` that comes with its function's name is a new call. Calls are
 * numbered per choice, in the order they begin.
 */
class ToolCallSlots {
  /** Per choice: the calls begun, the last one continued, and each call by upstream index and by id. */
  private readonly choices = new Map<
    number,
    {
      count: number;
      last: number | null;
      byIndex: Map<number, number>;
      byId: Map<string, number>;
      idOf: Map<number, string>;
    }
  >();

  deltas(choice: number, calls: unknown[]): Json[] {
    let s = this.choices.get(choice);
    if (!s) {
      s = { count: 0, last: null, byIndex: new Map(), byId: new Map(), idOf: new Map() };
      this.choices.set(choice, s);
    }
    const out: Json[] = [];
    for (const t of calls) {
      if (!isObject(t)) continue;
      const id = nonEmpty(t.id);
      const fn = isObject(t.function) ? withoutNulls(t.function) : null;
      const upstream = Number.isInteger(t.index) && (t.index as number) >= 0 ? (t.index as number) : null;
      let at = id !== null ? s.byId.get(id) : undefined;
      if (at === undefined && upstream !== null) {
        at = s.byIndex.get(upstream);
        // Another call begins where one already did (its own id, its function's name).
        const began = at === undefined ? undefined : s.idOf.get(at);
        if (id !== null && nonEmpty(fn?.name) !== null && began !== undefined && began !== id) at = undefined;
      }
      if (at === undefined && upstream === null && id === null) at = s.last ?? undefined;
      at ??= s.count++;
      if (upstream !== null) s.byIndex.set(upstream, at);
      if (id !== null && !s.byId.has(id)) s.byId.set(id, at);
      if (id !== null && !s.idOf.has(at)) s.idOf.set(at, id);
      s.last = at;
      out.push({ ...withoutNulls(t), index: at, ...(fn ? { function: fn } : {}) });
    }
    return out;
  }
}

/** Efforts OpenAI-compatible servers take as `reasoning_effort` (OpenAI, Groq, vLLM, DeepInfra, …). */
const OPENAI_EFFORTS = new Set(["minimal", "low", "medium", "high", "xhigh"]);

/**
 * The router's `reasoning` object and `include_reasoning` are not OpenAI's chat parameters (OpenAI
 * refuses a request with an argument it does not know): `reasoning.effort` is sent as the
 * top-level `reasoning_effort` the servers take (unless the client set that itself; `max` as
 * `high`, the highest they all know), and both fields are left out. What has no OpenAI-compatible
 * form (`reasoning.max_tokens`, `enabled`, effort `none`) asks for the model's default; leaving
 * reasoning out of the answer (`exclude`, `include_reasoning: false`) is Gatehouse's own work.
 */
function routerReasoning(body: Json): void {
  const r = body.reasoning;
  delete body.reasoning;
  delete body.include_reasoning;
  if (body.reasoning_effort !== undefined && body.reasoning_effort !== null) return;
  const effort = isObject(r) ? r.effort : undefined;
  if (effort === "max") body.reasoning_effort = "high";
  else if (typeof effort === "string" && OPENAI_EFFORTS.has(effort)) body.reasoning_effort = effort;
}

function withoutNulls(o: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(o)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

/**
 * Content sent as a list of parts instead of a string, as Mistral's reasoning models do:
 * `[{"type":"thinking","thinking":[{"type":"text","text":…}]}, {"type":"text","text":…}]`. The
 * SDK takes a string (a stream delta's content must be one), so the text parts are joined (no
 * separator: in a stream they are pieces of one text), and thinking / reasoning parts go to
 * `reasoning`. Any other part with a string `text` counts as text; parts without text (an image)
 * are not forwarded. `text` is null when no part had text.
 */
export function contentParts(content: unknown): { text: string | null; reasoning: string } {
  let text: string | null = null;
  let reasoning = "";
  for (const p of Array.isArray(content) ? content : [content]) {
    if (typeof p === "string") text = (text ?? "") + p;
    else if (!isObject(p)) continue;
    else if (p.type === "thinking" || p.type === "reasoning")
      reasoning += partText(p.thinking ?? p.reasoning ?? p.text ?? p.summary ?? p.content);
    else if (typeof p.text === "string") text = (text ?? "") + p.text;
  }
  return { text, reasoning };
}

/** Reasoning sent beside the content, with the content's thinking parts after it. */
function withReasoning(reasoning: unknown, fromParts: string): unknown {
  if (fromParts === "") return reasoning;
  return typeof reasoning === "string" ? reasoning + fromParts : fromParts;
}

/** The text inside a thinking part: a string, or a list of strings / `{text}` parts, joined. */
function partText(v: unknown): string {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map(partText).join("");
  return isObject(v) && typeof v.text === "string" ? v.text : "";
}
