import { malformed } from "../malformed.js";
import { ANTHROPIC_REASONING_FORMAT } from "./anthropic-request.js";
import {
  UpstreamError,
  type ProviderChunk,
  type ProviderCompletion,
  type ProviderUsage,
} from "../provider.js";
import { isRetryableStatus } from "../upstream-http.js";

/**
 * Anthropic Messages answers → the OpenAI shape: text blocks → content, tool_use → tool_calls
 * (arguments as a JSON string), thinking → reasoning and reasoning_details; stop_reason → finish_reason; usage: prompt
 * tokens are input + cache reads + cache writes (Anthropic counts them apart; OpenAI's prompt
 * count includes cached tokens), cached = cache reads, cache writes = cache_creation_input_tokens,
 * reasoning = output_tokens_details.thinking_tokens.
 */
type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const num = (v: unknown): number =>
  typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0;

const FINISH: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

export function finishReason(stop: unknown): string | null {
  if (typeof stop !== "string") return null;
  return FINISH[stop] ?? "stop";
}

export function anthropicUsage(u: Json, outputTokens?: number): ProviderUsage {
  const cacheRead = num(u.cache_read_input_tokens);
  const cacheWrite = num(u.cache_creation_input_tokens);
  const completionTokens = outputTokens ?? num(u.output_tokens);
  // Thinking is counted inside output_tokens; `output_tokens_details.thinking_tokens` says how
  // much of it (0 when the upstream does not report it).
  const details = isObject(u.output_tokens_details) ? u.output_tokens_details : {};
  return {
    promptTokens: num(u.input_tokens) + cacheRead + cacheWrite,
    completionTokens,
    cachedTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    reasoningTokens: Math.min(num(details.thinking_tokens), completionTokens),
  };
}

/** Anthropic's error types → the HTTP status it documents for each. */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** An `error` event in a stream. Retryable by its type, and only while nothing was output. */
export function streamError(data: Json, afterOutput: boolean): UpstreamError {
  const e = isObject(data.error) ? data.error : {};
  const type = typeof e.type === "string" ? e.type : "api_error";
  const status = ERROR_STATUS[type] ?? 500;
  const message = typeof e.message === "string" ? e.message.slice(0, 300) : type;
  return new UpstreamError(
    `upstream reported ${type}: ${message}`,
    status,
    !afterOutput && isRetryableStatus(status),
  );
}

/**
 * Thinking as `reasoning_details` (the hosted original's shape, format "anthropic-claude-v1"):
 * a thinking block is a `reasoning.text` with its signature, a redacted one a
 * `reasoning.encrypted`. A client sends them back on the assistant turn, and the request
 * translation returns them to Anthropic as the blocks they were, which a tool-use turn with
 * thinking needs.
 */
const textDetail = (index: number, text: string | null, signature: string | null): Json => ({
  type: "reasoning.text",
  ...(text !== null ? { text } : {}),
  ...(signature !== null ? { signature } : {}),
  format: ANTHROPIC_REASONING_FORMAT,
  index,
});
const encryptedDetail = (index: number, data: string): Json => ({
  type: "reasoning.encrypted",
  data,
  format: ANTHROPIC_REASONING_FORMAT,
  index,
});
const signatureOf = (block: Json): string | null =>
  typeof block.signature === "string" && block.signature !== "" ? block.signature : null;

export function fromAnthropicMessage(o: Json): ProviderCompletion {
  if (!Array.isArray(o.content)) throw malformed("no content", false);
  let text = "";
  let reasoning = "";
  const toolCalls: unknown[] = [];
  const details: Json[] = [];
  for (const block of o.content as unknown[]) {
    if (!isObject(block)) continue;
    if (block.type === "text" && typeof block.text === "string") text += block.text;
    else if (block.type === "thinking" && typeof block.thinking === "string") {
      reasoning += block.thinking;
      details.push(textDetail(details.length, block.thinking, signatureOf(block)));
    } else if (block.type === "redacted_thinking" && typeof block.data === "string") {
      details.push(encryptedDetail(details.length, block.data));
    } else if (block.type === "tool_use") {
      toolCalls.push({
        id: block.id,
        type: "function",
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  return {
    upstreamId: typeof o.id === "string" ? o.id : null,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: text === "" && toolCalls.length > 0 ? null : text,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          ...(reasoning !== "" ? { reasoning } : {}),
          ...(details.length > 0 ? { reasoning_details: details } : {}),
        },
        finish_reason: finishReason(o.stop_reason),
      },
    ],
    usage: isObject(o.usage) ? anthropicUsage(o.usage) : null,
  };
}

/**
 * The streaming translation, one event at a time. message_start gives the id and input usage;
 * content blocks become content, reasoning or tool_calls deltas (a tool's index counts tool
 * blocks only, as OpenAI's does); message_delta gives the finish reason and the cumulative usage;
 * message_stop ends it; content_block_stop of a tool that streamed no input gives its arguments
 * as "{}". ping and event types this code does not know are skipped (Anthropic's versioning
 * policy allows new ones).
 */
export class AnthropicStream {
  private id: string | null = null;
  /** null until the upstream reports usage (message_start or message_delta). */
  private usageSoFar: Json | null = null;
  /** message_start's prompt counts, not yet passed on (ProviderChunk.prompt). */
  private promptPending = false;
  private readonly toolIndex = new Map<number, number>();
  /** Thinking blocks (by content index) → their index among the answer's reasoning_details. */
  private readonly detailIndex = new Map<number, number>();
  /** Tool blocks (by content index) whose input has had a non-empty piece. */
  private readonly toolHasInput = new Set<number>();
  private roleSent = false;
  /** True once message_stop arrived. */
  done = false;
  /** True once a chunk was produced. */
  output = false;

  next(event: Json): ProviderChunk | null {
    switch (event.type) {
      case "message_start": {
        const m = isObject(event.message) ? event.message : {};
        this.id = typeof m.id === "string" ? m.id : null;
        this.usageSoFar = isObject(m.usage) ? { ...m.usage } : null;
        this.promptPending = this.usageSoFar !== null;
        return null;
      }
      case "content_block_start":
        return this.blockStart(event);
      case "content_block_delta":
        return this.blockDelta(event);
      case "message_delta": {
        // Counts are cumulative; a null one (MessageDeltaUsage types input_tokens and the cache
        // counts `number | null`) is not reported by this event and keeps message_start's value.
        if (isObject(event.usage)) {
          const reported = Object.entries(event.usage).filter(([, v]) => v !== null && v !== undefined);
          this.usageSoFar = { ...this.usageSoFar, ...Object.fromEntries(reported) };
        }
        const delta = isObject(event.delta) ? event.delta : {};
        const finish = finishReason(delta.stop_reason);
        const usage = this.usageSoFar === null ? null : anthropicUsage(this.usageSoFar);
        if (finish === null && usage === null) return null;
        return this.chunk(finish === null ? [] : [{ index: 0, delta: {}, finish_reason: finish }], usage);
      }
      case "content_block_stop":
        return this.blockStop(event);
      case "message_stop":
        this.done = true;
        return null;
      case "error":
        throw streamError(event, this.output);
      default:
        return null;
    }
  }

  private blockStart(event: Json): ProviderChunk | null {
    const index = num(event.index);
    const block = isObject(event.content_block) ? event.content_block : {};
    if (block.type === "tool_use") {
      const toolIndex = this.toolIndex.size;
      this.toolIndex.set(index, toolIndex);
      return this.delta({
        tool_calls: [
          { index: toolIndex, id: block.id, type: "function", function: { name: block.name, arguments: "" } },
        ],
      });
    }
    if (block.type === "text" && typeof block.text === "string" && block.text !== "")
      return this.delta({ content: block.text });
    if (block.type === "thinking") {
      const at = this.detailAt(index);
      const text = typeof block.thinking === "string" ? block.thinking : "";
      const signature = signatureOf(block);
      if (text === "" && signature === null) return null;
      return this.delta({
        ...(text !== "" ? { reasoning: text } : {}),
        reasoning_details: [textDetail(at, text !== "" ? text : null, signature)],
      });
    }
    if (block.type === "redacted_thinking" && typeof block.data === "string") {
      return this.delta({ reasoning_details: [encryptedDetail(this.detailAt(index), block.data)] });
    }
    return null;
  }

  private detailAt(contentIndex: number): number {
    let at = this.detailIndex.get(contentIndex);
    if (at === undefined) {
      at = this.detailIndex.size;
      this.detailIndex.set(contentIndex, at);
    }
    return at;
  }

  private blockDelta(event: Json): ProviderChunk | null {
    const d = isObject(event.delta) ? event.delta : {};
    if (d.type === "text_delta" && typeof d.text === "string") return this.delta({ content: d.text });
    if (d.type === "thinking_delta" && typeof d.thinking === "string") {
      const at = this.detailAt(num(event.index));
      return this.delta({ reasoning: d.thinking, reasoning_details: [textDetail(at, d.thinking, null)] });
    }
    if (d.type === "signature_delta" && typeof d.signature === "string" && d.signature !== "") {
      const at = this.detailAt(num(event.index));
      return this.delta({ reasoning_details: [textDetail(at, null, d.signature)] });
    }
    if (d.type === "input_json_delta" && typeof d.partial_json === "string") {
      const toolIndex = this.toolIndex.get(num(event.index));
      if (toolIndex === undefined) throw malformed("input_json_delta outside a tool_use block", this.output);
      if (d.partial_json === "") return null;
      this.toolHasInput.add(num(event.index));
      return this.delta({ tool_calls: [{ index: toolIndex, function: { arguments: d.partial_json } }] });
    }
    return null; // citations_delta: nothing to forward
  }

  /**
   * A tool called without arguments streams no input (or only "" pieces); its input is still the
   * empty object, so its arguments are "{}", as in a non-streamed answer and OpenAI's own.
   */
  private blockStop(event: Json): ProviderChunk | null {
    const index = num(event.index);
    const toolIndex = this.toolIndex.get(index);
    if (toolIndex === undefined || this.toolHasInput.has(index)) return null;
    this.toolHasInput.add(index);
    return this.delta({ tool_calls: [{ index: toolIndex, function: { arguments: "{}" } }] });
  }

  private delta(delta: Json): ProviderChunk {
    if (!this.roleSent) {
      this.roleSent = true;
      delta = { role: "assistant", ...delta };
    }
    return this.chunk([{ index: 0, delta, finish_reason: null }], null);
  }

  private chunk(choices: ProviderChunk["choices"], usage: ProviderUsage | null): ProviderChunk {
    this.output = true;
    if (!this.promptPending || this.usageSoFar === null) return { upstreamId: this.id, choices, usage };
    this.promptPending = false;
    const { promptTokens, cachedTokens, cacheWriteTokens } = anthropicUsage(this.usageSoFar);
    return { upstreamId: this.id, choices, usage, prompt: { promptTokens, cachedTokens, cacheWriteTokens } };
  }
}
