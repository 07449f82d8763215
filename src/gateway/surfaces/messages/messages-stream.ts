import { ANTHROPIC_REASONING_FORMAT } from "../../providers/anthropic/anthropic-request.js";
import type { ProviderChunk } from "../../providers/provider.js";
import { anthropicErrorBody } from "./messages-errors.js";
import { deltaUsage, inputClasses, stopReason } from "./messages-usage.js";
import { isObject, type Json } from "../../../lib/json-object.js";

/**
 * A chat stream as Anthropic's named SSE events (docs/surfaces/messages.md "Streaming"):
 * `message_start`, then per content block `content_block_start` → `content_block_delta` x n →
 * `content_block_stop`, then `message_delta` (stop reason, cumulative usage, cost) and
 * `message_stop`. Every event has its `event:` line: Anthropic's client skips events without one.
 *
 * Blocks come one after the other, with indexes from 0: a chunk's reasoning opens a thinking block
 * (Anthropic's own reasoning_details, one block per detail `index`, with its signature as a
 * signature_delta; another provider's reasoning text as one unsigned block), its content a text
 * block, each tool call (by its chat `index`) a tool_use block whose arguments are
 * input_json_delta pieces. A block of another kind, or another tool call, closes the open one.
 * A piece of a tool call whose block is already closed (an upstream interleaving parallel calls)
 * goes to that block's index: the client accumulates deltas by index, and the piece is not lost.
 *
 * Each event is one string built once (no re-parsing of the chunk's text).
 */

const event = (name: string, data: Json): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** The key of the open thinking block: a reasoning_details index, or PLAIN for reasoning text. */
const PLAIN = -1;

type OpenBlock =
  | { kind: "text"; index: number }
  | { kind: "thinking"; index: number; key: number }
  | { kind: "tool"; index: number };

export interface MessagesStreamHead {
  /** The generation's id (`gen-…`), the Message's id. */
  id: string;
  model: string;
  provider: string;
}

export class MessagesStreamEncoder {
  private started = false;
  private open: OpenBlock | null = null;
  private blocks = 0;
  /** Chat tool call index → its tool_use block's index. */
  private readonly toolBlocks = new Map<number, number>();
  private refused = false;

  constructor(private readonly head: MessagesStreamHead) {}

  /**
   * `message_start`: the Message with no content, its input counts (the upstream's early count
   * when there is one, else 0: message_delta carries the final counts) and 0 output tokens. Once
   * per stream: "" when already sent (the other methods send it first when it was not).
   */
  start(prompt?: { promptTokens: number; cachedTokens: number; cacheWriteTokens?: number }): string {
    if (this.started) return "";
    this.started = true;
    const { id, model, provider } = this.head;
    return event("message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        container: null,
        usage: {
          ...inputClasses(
            prompt?.promptTokens ?? 0,
            prompt?.cachedTokens ?? 0,
            prompt?.cacheWriteTokens ?? 0,
          ),
          output_tokens: 0,
          cache_creation: null,
          output_tokens_details: null,
          server_tool_use: null,
          service_tier: null,
          inference_geo: null,
        },
        provider,
      },
    });
  }

  /** The events for one chat chunk (its first choice; the gateway streams one). */
  chunk(c: ProviderChunk): string {
    let out = this.start();
    const choice = c.choices[0];
    if (!choice) return out;
    const d = choice.delta;
    out += this.reasoning(d);
    for (const key of ["content", "refusal"]) {
      const text = d[key];
      if (typeof text !== "string" || text === "") continue;
      if (key === "refusal") this.refused = true;
      if (this.open?.kind !== "text")
        out += this.openBlock(
          { kind: "text", index: this.blocks },
          { type: "text", text: "", citations: null },
        );
      out += this.delta("text_delta", "text", text);
    }
    if (Array.isArray(d.tool_calls)) for (const tc of d.tool_calls as unknown[]) out += this.toolCall(tc);
    return out;
  }

  /**
   * The end: the open block's stop, `message_delta` with the stop reason and the usage (the chat
   * usage object, usageWire: cumulative output, the input classes, cost), `message_stop`. A
   * stream that called tools ends with "tool_use" even when its upstream said "stop"; one that
   * refused, with "refusal".
   */
  end(usage: Json, finishReason: string | null): string {
    let out = this.start() + this.close();
    let stop = stopReason(finishReason);
    if (this.refused) stop = "refusal";
    else if (this.toolBlocks.size > 0 && (stop === "end_turn" || stop === null)) stop = "tool_use";
    out += event("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null, stop_details: null, container: null },
      usage: deltaUsage(usage),
    });
    return out + event("message_stop", { type: "message_stop" });
  }

  /**
   * A failure after the stream opened: an `error` event with the Anthropic error body (the
   * client throws it as an APIError). Nothing may follow it.
   */
  fail(status: number, message: string, errorType: string): string {
    return event("error", anthropicErrorBody(status, message, this.head.id, { error_type: errorType }));
  }

  private reasoning(d: Json): string {
    let out = "";
    const details = Array.isArray(d.reasoning_details)
      ? (d.reasoning_details as unknown[]).filter(
          (x): x is Json =>
            isObject(x) &&
            (x.format === undefined || x.format === null || x.format === ANTHROPIC_REASONING_FORMAT),
        )
      : [];
    if (details.length === 0) {
      // Another provider's reasoning (or no details at all): its text, as one unsigned block.
      if (typeof d.reasoning === "string" && d.reasoning !== "") out += this.thinking(PLAIN, d.reasoning, "");
      return out;
    }
    for (const x of details) {
      const key = typeof x.index === "number" ? x.index : 0;
      if (x.type === "reasoning.encrypted" && typeof x.data === "string") {
        out += this.close();
        out += this.openBlock(
          { kind: "thinking", index: this.blocks, key },
          { type: "redacted_thinking", data: x.data },
        );
        out += this.close();
      } else if (x.type === "reasoning.text") {
        out += this.thinking(
          key,
          typeof x.text === "string" ? x.text : "",
          typeof x.signature === "string" ? x.signature : "",
        );
      }
    }
    return out;
  }

  private thinking(key: number, text: string, signature: string): string {
    let out = "";
    if (this.open?.kind !== "thinking" || this.open.key !== key)
      out += this.openBlock(
        { kind: "thinking", index: this.blocks, key },
        { type: "thinking", thinking: "", signature: "" },
      );
    if (text !== "") out += this.delta("thinking_delta", "thinking", text);
    if (signature !== "") out += this.delta("signature_delta", "signature", signature);
    return out;
  }

  private toolCall(tc: unknown): string {
    if (!isObject(tc)) return "";
    const at = typeof tc.index === "number" ? tc.index : 0;
    const fn = isObject(tc.function) ? tc.function : {};
    let out = "";
    let index = this.toolBlocks.get(at);
    if (index === undefined) {
      index = this.blocks;
      this.toolBlocks.set(at, index);
      out += this.openBlock(
        { kind: "tool", index },
        {
          type: "tool_use",
          id: typeof tc.id === "string" ? tc.id : `toolu_${at}`,
          name: typeof fn.name === "string" ? fn.name : "",
          input: {},
        },
      );
    }
    const args = fn.arguments;
    if (typeof args === "string" && args !== "")
      out += this.deltaAt(index, "input_json_delta", "partial_json", args);
    return out;
  }

  /** Closes the open block and opens the next, with index `block.index` (the next free one). */
  private openBlock(block: OpenBlock, contentBlock: Json): string {
    const out = this.close();
    this.open = block;
    this.blocks += 1;
    return (
      out +
      event("content_block_start", {
        type: "content_block_start",
        index: block.index,
        content_block: contentBlock,
      })
    );
  }

  private close(): string {
    if (this.open === null) return "";
    const { index } = this.open;
    this.open = null;
    return event("content_block_stop", { type: "content_block_stop", index });
  }

  private delta(type: string, key: string, value: string): string {
    return this.deltaAt((this.open as OpenBlock).index, type, key, value);
  }

  private deltaAt(index: number, type: string, key: string, value: string): string {
    return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"${type}","${key}":${JSON.stringify(value)}}}\n\n`;
  }
}
