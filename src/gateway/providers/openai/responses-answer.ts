import { malformed } from "../malformed.js";
import type { ProviderChoice, ProviderChunk, ProviderCompletion, ProviderUsage } from "../provider.js";
import { inBandError, isObject, type Json } from "./openai-json.js";

/**
 * An upstream's Responses API answer (a native Responses call, UpstreamCall.native of kind
 * `openai-responses`) → the chat-shaped ProviderCompletion / ProviderChunk the data plane reads,
 * so that usage, counting, settlement and the Responses surface's own encoder work as for any
 * other provider. Pure. What it reads (OpenAI's Responses wire format, docs/surfaces/responses.md
 * "Native pass-through"):
 *
 * - output items: `message` (its `output_text` parts → the text, `refusal` parts → the refusal),
 *   `function_call` (→ a tool call: `call_id` its id, `name`, `arguments`), `reasoning` (its
 *   summaries and reasoning text → `reasoning`; each also a `reasoning_details` entry of format
 *   RESPONSES_REASONING_FORMAT, its `encrypted_content` a `reasoning.encrypted` one, which the
 *   surface carries back to the client). Other items (a hosted tool's call) carry nothing the chat
 *   shape has a place for and are skipped;
 * - `usage`: input_tokens (the cached ones among them, as in chat), output_tokens (the reasoning
 *   ones among them), input_tokens_details.cached_tokens, output_tokens_details.reasoning_tokens;
 * - the status: completed → `stop` (`tool_calls` when it called a function), incomplete →
 *   `length` (max_output_tokens) or `content_filter`; failed, or an `error` → UpstreamError;
 * - a stream's events: response.created (the id), output_item.added (a function call begins),
 *   output_text.delta, refusal.delta, function_call_arguments.delta / .done (the whole arguments
 *   when no delta came), reasoning_summary_text.delta, reasoning_text.delta, output_item.done (a
 *   reasoning item's encrypted content), response.completed / response.incomplete (the finish and
 *   usage; the end), response.failed and `error` (a failure). Other events are skipped.
 */

/** The format the reasoning_details of a Responses upstream's reasoning carry (the hosted original's tag). */
export const RESPONSES_REASONING_FORMAT = "openai-responses-v1";

const num = (v: unknown): number =>
  typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0;
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** Responses `usage` → port usage; null when absent or not an object. */
export function responsesUsage(u: unknown): ProviderUsage | null {
  if (!isObject(u)) return null;
  const input = isObject(u.input_tokens_details) ? u.input_tokens_details : {};
  const output = isObject(u.output_tokens_details) ? u.output_tokens_details : {};
  return {
    promptTokens: num(u.input_tokens),
    completionTokens: num(u.output_tokens),
    cachedTokens: num(input.cached_tokens),
    cacheWriteTokens: num(input.cache_write_tokens),
    reasoningTokens: num(output.reasoning_tokens),
  };
}

/** The chat finish reason of a result (`tools`: it called a function). */
export function finishReasonOf(result: Json, tools: boolean): string {
  if (result.status === "incomplete") {
    const reason = isObject(result.incomplete_details) ? result.incomplete_details.reason : undefined;
    return reason === "content_filter" ? "content_filter" : "length";
  }
  return tools ? "tool_calls" : "stop";
}

/** A failed result's (or an `error` event's) error; null when there is none. */
function failureOf(o: Json, afterOutput: boolean): Error | null {
  const inBand = inBandError(o, afterOutput);
  if (inBand) return inBand;
  if (o.status === "failed") return inBandError({ error: "the response failed" }, afterOutput);
  return null;
}

/** The text of a reasoning item's summaries, and of its reasoning text. */
function reasoningTexts(item: Json): { summary: string; text: string } {
  const texts = (parts: unknown): string =>
    Array.isArray(parts) ? parts.map((p) => (isObject(p) ? str(p.text) : "")).join("") : "";
  return { summary: texts(item.summary), text: texts(item.content) };
}

/** A whole reasoning item's details: summary, text, encrypted content, each when present. */
function reasoningDetails(item: Json, first: number): Json[] {
  const { summary, text } = reasoningTexts(item);
  const format = RESPONSES_REASONING_FORMAT;
  const id = typeof item.id === "string" ? { id: item.id } : {};
  const out: Json[] = [];
  if (summary !== "")
    out.push({ type: "reasoning.summary", summary, format, index: first + out.length, ...id });
  if (text !== "") out.push({ type: "reasoning.text", text, format, index: first + out.length, ...id });
  if (typeof item.encrypted_content === "string" && item.encrypted_content !== "") {
    out.push({
      type: "reasoning.encrypted",
      data: item.encrypted_content,
      format,
      index: first + out.length,
      ...id,
    });
  }
  return out;
}

/** A function_call item → a whole tool call in the chat shape. */
function toolCall(item: Json, n: number): Json {
  const args = item.arguments;
  return {
    id: typeof item.call_id === "string" ? item.call_id : typeof item.id === "string" ? item.id : `call_${n}`,
    type: "function",
    function: {
      name: str(item.name),
      arguments:
        typeof args === "string" && args !== "" ? args : isObject(args) ? JSON.stringify(args) : "{}",
    },
  };
}

/** A whole Responses result (`object: "response"`) → a completion. Throws UpstreamError. */
export function fromResponsesResult(o: Json): ProviderCompletion {
  const failure = failureOf(o, false);
  if (failure) throw failure;
  if (!Array.isArray(o.output)) throw malformed("no output", false);
  let content: string | null = null;
  let refusal: string | null = null;
  let reasoning = "";
  const details: Json[] = [];
  const calls: Json[] = [];
  for (const item of o.output) {
    if (!isObject(item)) continue;
    if (item.type === "message" && Array.isArray(item.content)) {
      for (const p of item.content) {
        if (!isObject(p)) continue;
        if (p.type === "output_text") content = (content ?? "") + str(p.text);
        else if (p.type === "refusal") refusal = (refusal ?? "") + str(p.refusal);
      }
    } else if (item.type === "function_call") calls.push(toolCall(item, calls.length));
    else if (item.type === "reasoning") {
      const t = reasoningTexts(item);
      reasoning += t.summary + t.text;
      details.push(...reasoningDetails(item, details.length));
    }
  }
  const choice: ProviderChoice = {
    index: 0,
    message: {
      role: "assistant",
      content,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
      ...(reasoning !== "" ? { reasoning } : {}),
      ...(details.length > 0 ? { reasoning_details: details } : {}),
      ...(refusal !== null ? { refusal } : {}),
    },
    finish_reason: finishReasonOf(o, calls.length > 0),
  };
  return {
    upstreamId: typeof o.id === "string" ? o.id : null,
    choices: [choice],
    usage: responsesUsage(o.usage),
  };
}

/** One function call of a stream: its tool-call index, and whether argument deltas came. */
interface StreamedCall {
  index: number;
  deltas: boolean;
}

/**
 * A Responses stream's events, one at a time, → chunks. `output` turns true once something was
 * generated (a failure after it is not retryable); `done` once the final event came.
 */
export class ResponsesEvents {
  output = false;
  done = false;
  private id: string | null = null;
  /** Function calls by item id (and by output index, for events that name only that). */
  private readonly calls = new Map<string, StreamedCall>();
  private callCount = 0;
  /** reasoning_details indexes, by reasoning item and kind of detail. */
  private readonly detailIndex = new Map<string, number>();

  /** The chunk an event makes, or null (an event that carries nothing for the chat shape). Throws UpstreamError. */
  next(eventName: string | undefined, e: Json): ProviderChunk | null {
    const type = typeof e.type === "string" ? e.type : eventName;
    switch (type) {
      case "response.created":
      case "response.in_progress":
        if (isObject(e.response) && typeof e.response.id === "string") this.id = e.response.id;
        return null;
      case "response.output_text.delta":
        return this.delta({ content: str(e.delta) });
      case "response.refusal.delta":
        return this.delta({ refusal: str(e.delta) });
      case "response.reasoning_summary_text.delta":
        return this.reasoning(e, "reasoning.summary", "summary");
      case "response.reasoning_text.delta":
        return this.reasoning(e, "reasoning.text", "text");
      case "response.output_item.added":
        return isObject(e.item) && e.item.type === "function_call" ? this.callBegins(e, e.item) : null;
      case "response.function_call_arguments.delta": {
        const call = this.callOf(e);
        if (!call) return null;
        call.deltas = true;
        return this.delta({ tool_calls: [{ index: call.index, function: { arguments: str(e.delta) } }] });
      }
      case "response.function_call_arguments.done": {
        const call = this.callOf(e);
        if (!call || call.deltas || typeof e.arguments !== "string" || e.arguments === "") return null;
        call.deltas = true;
        return this.delta({ tool_calls: [{ index: call.index, function: { arguments: e.arguments } }] });
      }
      case "response.output_item.done":
        return isObject(e.item) && e.item.type === "reasoning" ? this.encrypted(e.item) : null;
      case "response.completed":
      case "response.incomplete":
        return this.end(isObject(e.response) ? e.response : {});
      case "response.failed": {
        const r = isObject(e.response) ? e.response : {};
        throw failureOf({ ...r, status: "failed" }, this.output) ?? malformed("response.failed", this.output);
      }
      case "error":
        throw (
          inBandError({ error: isObject(e.error) ? e.error : e }, this.output) ??
          malformed("error event", this.output)
        );
      default:
        return null;
    }
  }

  private chunk(
    delta: Json,
    finish: string | null = null,
    usage: ProviderUsage | null = null,
  ): ProviderChunk {
    return { upstreamId: this.id, choices: [{ index: 0, delta, finish_reason: finish }], usage };
  }

  private delta(delta: Json): ProviderChunk | null {
    const empty = Object.values(delta).every((v) => v === "");
    if (empty) return null;
    this.output = true;
    return this.chunk(delta);
  }

  private callBegins(e: Json, item: Json): ProviderChunk {
    const call: StreamedCall = { index: this.callCount++, deltas: false };
    if (typeof item.id === "string") this.calls.set(`id:${item.id}`, call);
    if (typeof e.output_index === "number") this.calls.set(`at:${e.output_index}`, call);
    const args = typeof item.arguments === "string" ? item.arguments : "";
    if (args !== "") call.deltas = true;
    this.output = true;
    return this.chunk({
      tool_calls: [
        {
          index: call.index,
          id: typeof item.call_id === "string" ? item.call_id : `call_${call.index}`,
          type: "function",
          function: { name: str(item.name), arguments: args },
        },
      ],
    });
  }

  private callOf(e: Json): StreamedCall | undefined {
    return (
      (typeof e.item_id === "string" ? this.calls.get(`id:${e.item_id}`) : undefined) ??
      (typeof e.output_index === "number" ? this.calls.get(`at:${e.output_index}`) : undefined)
    );
  }

  /** The index of a reasoning item's detail of one kind (its pieces share it). */
  private indexOf(item: unknown, kind: string): number {
    const key = `${String(item)}:${kind}`;
    let at = this.detailIndex.get(key);
    if (at === undefined) {
      at = this.detailIndex.size;
      this.detailIndex.set(key, at);
    }
    return at;
  }

  private reasoning(e: Json, type: string, field: string): ProviderChunk | null {
    const text = str(e.delta);
    if (text === "") return null;
    const item = e.item_id ?? e.output_index;
    const detail = {
      type,
      [field]: text,
      format: RESPONSES_REASONING_FORMAT,
      index: this.indexOf(item, type),
    };
    return this.delta({ reasoning: text, reasoning_details: [detail] });
  }

  /** A finished reasoning item's encrypted content, which the client needs back on its next turn. */
  private encrypted(item: Json): ProviderChunk | null {
    if (typeof item.encrypted_content !== "string" || item.encrypted_content === "") return null;
    const detail = {
      type: "reasoning.encrypted",
      data: item.encrypted_content,
      format: RESPONSES_REASONING_FORMAT,
      index: this.indexOf(item.id, "reasoning.encrypted"),
      ...(typeof item.id === "string" ? { id: item.id } : {}),
    };
    this.output = true;
    return this.chunk({ reasoning_details: [detail] });
  }

  private end(result: Json): ProviderChunk {
    this.done = true;
    if (typeof result.id === "string") this.id ??= result.id;
    return this.chunk({}, finishReasonOf(result, this.callCount > 0), responsesUsage(result.usage));
  }
}
