import type { ProviderChunk } from "../../providers/provider.js";
import type { StreamEncoder, StreamEncoderFor } from "../../chat/stream-encoder.js";
import { SSE_DONE } from "../../chat/wire.js";
import { isObject, type Json } from "./body-fields.js";
import { ReasoningDetails } from "./reasoning-carry.js";
import {
  callIdFor,
  functionCallItem,
  incompleteReason,
  itemId,
  logprobsOf,
  messageItem,
  reasoningItem,
  refusalPart,
  responseOwnFields,
  responsesUsage,
  textPart,
  type ItemStatus,
  type ResponseState,
} from "./responses-items.js";
import type { ResponsesEcho } from "./responses-request.js";

/**
 * Chat chunks → the Responses event stream (docs/surfaces/responses.md "Streaming").
 *
 * The Responses StreamEncoder (chat/stream-encoder.ts): the data plane forwards, counts and
 * settles a stream as for chat; only the bytes differ. `open` sends `response.created` and
 * `response.in_progress`, full response snapshots with no output. Each chunk opens, extends and closes output items: reasoning (summary and reasoning
 * text parts), the assistant message (output_text and refusal parts), one function_call per tool
 * call. A new item closes the open one first (its `.done` events), so items follow one another as
 * a Responses client expects. `finish` closes the last item and sends the terminal event,
 * `response.completed` (or `response.incomplete` when the chat answer stopped at its length
 * limit) with the whole final response, usage included: the OpenAI client's `stream()` replaces
 * its snapshot with it. `fail` sends `response.failed` instead. `done` (`data: [DONE]`) follows
 * either.
 *
 * Every event is `event: <type>` and `data: <json>` with `type` and `sequence_number` (from 0).
 * Deltas are built from a prefix made once per part, and the request's echoed fields are
 * serialized once per stream, as the chat stream's ChunkEncoder does.
 */

export interface ResponsesStreamHead {
  /** The response id: the generation id. */
  id: string;
  model: string;
  /** Unix seconds. */
  createdAt: number;
  echo: ResponsesEcho;
  /** The time in Unix seconds, for `completed_at` (the system clock unless given). */
  now?: () => number;
}

/** An open or closed message part. */
interface Part {
  type: "output_text" | "refusal";
  text: string;
  logprobs: Json[];
  /** Made when the part opens: a delta event up to its `"delta":`. */
  prefix: string;
}

interface MessageItem {
  kind: "msg";
  index: number;
  id: string;
  parts: Part[];
  part: Part | null;
  status: ItemStatus;
}

interface ReasoningItem {
  kind: "rs";
  index: number;
  id: string;
  details: ReasoningDetails;
  /** The summary's text while its part is open (null: never opened). */
  summary: string | null;
  /** The reasoning text while its part is open (null: never opened). */
  text: string | null;
  summaryPrefix: string;
  textPrefix: string;
  status: ItemStatus;
}

interface CallItem {
  kind: "fc";
  index: number;
  id: string;
  callId: string;
  name: string;
  args: string;
  prefix: string;
  status: ItemStatus;
}

type Item = MessageItem | ReasoningItem | CallItem;

const frame = (type: string, json: string): string => `event: ${type}\ndata: ${json}\n\n`;
const q = (s: string): string => JSON.stringify(s);

/** The text of one kind of reasoning detail among a chunk's pieces. */
function detailText(pieces: unknown, type: string, key: string): string {
  if (!Array.isArray(pieces)) return "";
  let s = "";
  for (const p of pieces) if (isObject(p) && p.type === type && typeof p[key] === "string") s += p[key];
  return s;
}

export class ResponsesStreamEncoder implements StreamEncoder {
  readonly done = SSE_DONE;
  private seq = 0;
  private started = false;
  private readonly items: Item[] = [];
  private current: Item | null = null;
  private readonly calls = new Map<number, CallItem>();
  /** The echoed request fields, `"instructions":…,"store":false` (no braces). */
  private readonly echoJson: string;

  constructor(private readonly head: ResponsesStreamHead) {
    this.echoJson = JSON.stringify(head.echo.fields).slice(1, -1);
  }

  open(): string {
    if (this.started) return "";
    this.started = true;
    const state: ResponseState = {
      status: "in_progress",
      completedAt: null,
      output: [],
      usage: null,
      incomplete: null,
      error: null,
    };
    const snapshot = this.response(state);
    return (
      this.event("response.created", `"response":${snapshot}`) +
      this.event("response.in_progress", `"response":${snapshot}`)
    );
  }

  chunk(c: ProviderChunk): string {
    let out = this.open();
    const ch = c.choices[0];
    if (!ch) return out;
    const d = ch.delta;
    out += this.reasoning(d.reasoning_details, d.reasoning);
    if (typeof d.content === "string" && d.content !== "")
      out += this.text("output_text", d.content, ch.logprobs);
    if (typeof d.refusal === "string" && d.refusal !== "") out += this.text("refusal", d.refusal, undefined);
    if (Array.isArray(d.tool_calls)) for (const t of d.tool_calls) if (isObject(t)) out += this.toolCall(t);
    return out;
  }

  /**
   * The end of the answer: the open item's `.done` events, then `response.completed` (or
   * `response.incomplete` for finish reason "length" or "content_filter") with the final response
   * and `usage` (the chat usage, chat/wire.ts usageWire).
   */
  finish(usage: Json, finishReason: string | null): string {
    let out = this.open();
    if (!this.items.some((i) => i.kind !== "rs")) out += this.text("output_text", "", undefined); // an empty answer is an empty message
    const incomplete = incompleteReason(finishReason);
    out += this.close(incomplete !== null ? "incomplete" : "completed");
    const response = this.response({
      status: incomplete !== null ? "incomplete" : "completed",
      completedAt: this.head.now?.() ?? Math.floor(Date.now() / 1000),
      output: this.items.map((i) => this.built(i)),
      usage: responsesUsage(usage),
      incomplete,
      error: null,
    });
    const type = incomplete !== null ? "response.incomplete" : "response.completed";
    return out + this.event(type, `"response":${response}`);
  }

  /**
   * A failure after the stream began (an upstream failure, 502; a timeout, 524; a shutdown, 503):
   * `response.failed` with `error {code, message}` (code `rate_limit_exceeded` for a 429,
   * `server_error` otherwise), the gateway's `error_type`, what was output so far (the open item
   * `incomplete`) and the usage charged for it.
   */
  fail(status: number, message: string, errorType: string, usage: Json): string {
    const out = this.open();
    if (this.current) this.current.status = "incomplete";
    this.current = null;
    const response = this.response({
      status: "failed",
      completedAt: null,
      output: this.items.map((i) => this.built(i)),
      usage: responsesUsage(usage),
      incomplete: null,
      error: { code: status === 429 ? "rate_limit_exceeded" : "server_error", message },
      errorType,
    });
    return out + this.event("response.failed", `"response":${response}`);
  }

  /** One event; `fields` is the JSON of its fields after `type` (no braces). */
  private event(type: string, fields: string): string {
    return frame(type, `{"type":${q(type)},"sequence_number":${this.seq++},${fields}}`);
  }

  /** A delta event from its part's prefix (`{"type":…,…,"delta":`) and what follows the delta. */
  private delta(type: string, prefix: string, delta: string, tail = ""): string {
    return frame(type, `${prefix}${q(delta)}${tail},"sequence_number":${this.seq++}}`);
  }

  private response(state: ResponseState): string {
    const own = JSON.stringify(responseOwnFields(this.head, state));
    return `${own.slice(0, -1)},${this.echoJson}}`;
  }

  private built(i: Item): Json {
    const { echo } = this.head;
    switch (i.kind) {
      case "msg":
        return messageItem(
          i.id,
          i.parts.map((p) => (p.type === "output_text" ? textPart(p.text, p.logprobs) : refusalPart(p.text))),
          i.status,
        );
      case "rs":
        // What was sent, so that the item that is done says what its deltas said.
        return reasoningItem(
          i.id,
          i.details.details,
          { summary: i.summary ?? "", text: i.text ?? "" },
          i.status,
        );
      case "fc":
        return functionCallItem(i.id, i.callId, i.name, i.args, i.status, echo);
    }
  }

  /** Closes the open item (and its open parts) with `status`. */
  private close(status: ItemStatus = "completed"): string {
    const i = this.current;
    if (!i) return "";
    this.current = null;
    let out = "";
    const at = `"item_id":${q(i.id)},"output_index":${i.index}`;
    if (i.kind === "msg") out += this.closePart(i);
    else if (i.kind === "rs") {
      if (i.summary !== null) {
        out += this.event(
          "response.reasoning_summary_text.done",
          `${at},"summary_index":0,"text":${q(i.summary)}`,
        );
        const part = JSON.stringify({ type: "summary_text", text: i.summary });
        out += this.event("response.reasoning_summary_part.done", `${at},"summary_index":0,"part":${part}`);
      }
      if (i.text !== null) {
        out += this.event("response.reasoning_text.done", `${at},"content_index":0,"text":${q(i.text)}`);
        const part = JSON.stringify({ type: "reasoning_text", text: i.text });
        out += this.event("response.content_part.done", `${at},"content_index":0,"part":${part}`);
      }
    } else {
      // Its Responses name (a namespaced function's own name; the namespace is on the item).
      const name = this.head.echo.names.fromChat(i.name).name;
      out += this.event(
        "response.function_call_arguments.done",
        `${at},"name":${q(name)},"arguments":${q(i.args)}`,
      );
    }
    i.status = status;
    return (
      out +
      this.event(
        "response.output_item.done",
        `"output_index":${i.index},"item":${JSON.stringify(this.built(i))}`,
      )
    );
  }

  private closePart(m: MessageItem): string {
    const p = m.part;
    if (!p) return "";
    m.part = null;
    const at = `"item_id":${q(m.id)},"output_index":${m.index},"content_index":${m.parts.length - 1}`;
    let out: string;
    let part: Json;
    if (p.type === "output_text") {
      out = this.event(
        "response.output_text.done",
        `${at},"text":${q(p.text)},"logprobs":${JSON.stringify(p.logprobs)}`,
      );
      part = textPart(p.text, p.logprobs);
    } else {
      out = this.event("response.refusal.done", `${at},"refusal":${q(p.text)}`);
      part = refusalPart(p.text);
    }
    return out + this.event("response.content_part.done", `${at},"part":${JSON.stringify(part)}`);
  }

  /** Opens a new item after closing the open one. */
  private add<T extends Item>(make: (index: number) => T, added: Json): { item: T; out: string } {
    let out = this.close();
    const item = make(this.items.length);
    this.items.push(item);
    this.current = item;
    out += this.event(
      "response.output_item.added",
      `"output_index":${item.index},"item":${JSON.stringify(added)}`,
    );
    return { item, out };
  }

  private reasoning(pieces: unknown, plain: unknown): string {
    const summary = detailText(pieces, "reasoning.summary", "summary");
    let text = detailText(pieces, "reasoning.text", "text");
    // The plain `reasoning` repeats the details' text when both come: it counts only without them.
    if (summary === "" && text === "" && typeof plain === "string") text = plain;
    const hasPieces = Array.isArray(pieces) && pieces.length > 0;
    if (summary === "" && text === "" && !hasPieces) return "";
    let out = "";
    let rs: ReasoningItem;
    if (this.current?.kind === "rs") rs = this.current;
    else {
      // A piece without text (a signature, encrypted data) belongs to the reasoning before it.
      const last = [...this.items].reverse().find((i): i is ReasoningItem => i.kind === "rs");
      if (summary === "" && text === "" && last) {
        last.details.add(pieces);
        return "";
      }
      const index = this.items.length;
      const id = itemId("rs", this.head.id, index);
      const opened = this.add<ReasoningItem>(
        () => ({
          kind: "rs",
          index,
          id,
          details: new ReasoningDetails(),
          summary: null,
          text: null,
          summaryPrefix: `{"type":"response.reasoning_summary_text.delta","item_id":${q(id)},"output_index":${index},"summary_index":0,"delta":`,
          textPrefix: `{"type":"response.reasoning_text.delta","item_id":${q(id)},"output_index":${index},"content_index":0,"delta":`,
          status: "in_progress",
        }),
        { type: "reasoning", id, status: "in_progress", summary: [] },
      );
      rs = opened.item;
      out += opened.out;
    }
    rs.details.add(pieces);
    const at = `"item_id":${q(rs.id)},"output_index":${rs.index}`;
    if (summary !== "") {
      if (rs.summary === null) {
        rs.summary = "";
        out += this.event(
          "response.reasoning_summary_part.added",
          `${at},"summary_index":0,"part":{"type":"summary_text","text":""}`,
        );
      }
      rs.summary += summary;
      out += this.delta("response.reasoning_summary_text.delta", rs.summaryPrefix, summary);
    }
    if (text !== "") {
      if (rs.text === null) {
        rs.text = "";
        out += this.event(
          "response.content_part.added",
          `${at},"content_index":0,"part":{"type":"reasoning_text","text":""}`,
        );
      }
      rs.text += text;
      out += this.delta("response.reasoning_text.delta", rs.textPrefix, text);
    }
    return out;
  }

  /** Text or refusal for the assistant message: opens the message, and the part, as needed. */
  private text(type: Part["type"], piece: string, chatLogprobs: unknown): string {
    let out = "";
    let m: MessageItem;
    if (this.current?.kind === "msg") m = this.current;
    else {
      const index = this.items.length;
      const id = itemId("msg", this.head.id, index);
      const opened = this.add<MessageItem>(
        () => ({ kind: "msg", index, id, parts: [], part: null, status: "in_progress" }),
        messageItem(id, [], "in_progress"),
      );
      m = opened.item;
      out += opened.out;
    }
    if (m.part?.type !== type) {
      out += this.closePart(m);
      const contentIndex = m.parts.length;
      const at = `"item_id":${q(m.id)},"output_index":${m.index},"content_index":${contentIndex}`;
      const eventType = type === "output_text" ? "response.output_text.delta" : "response.refusal.delta";
      const part: Part = { type, text: "", logprobs: [], prefix: `{"type":${q(eventType)},${at},"delta":` };
      m.parts.push(part);
      m.part = part;
      const empty = type === "output_text" ? textPart("", []) : refusalPart("");
      out += this.event("response.content_part.added", `${at},"part":${JSON.stringify(empty)}`);
    }
    const part = m.part;
    if (piece === "") return out;
    part.text += piece;
    if (type === "refusal") return out + this.delta("response.refusal.delta", part.prefix, piece);
    const logprobs = logprobsOf(chatLogprobs);
    if (logprobs.length > 0) part.logprobs.push(...logprobs);
    return (
      out +
      this.delta(
        "response.output_text.delta",
        part.prefix,
        piece,
        `,"logprobs":${logprobs.length > 0 ? JSON.stringify(logprobs) : "[]"}`,
      )
    );
  }

  /**
   * A tool call's piece: its first piece opens a function_call item (keyed by the chat tool call's
   * index); the arguments' pieces follow as deltas. Providers stream one call after another; a
   * piece for a call already closed (another item came between) cannot be sent as an event any
   * more, and goes into the final response's item only.
   */
  private toolCall(t: Json): string {
    const index = typeof t.index === "number" ? t.index : 0;
    const fn = isObject(t.function) ? t.function : {};
    const name = typeof fn.name === "string" ? fn.name : "";
    const args = typeof fn.arguments === "string" ? fn.arguments : "";
    let out = "";
    let call = this.calls.get(index);
    if (!call) {
      const outputIndex = this.items.length;
      const id = itemId("fc", this.head.id, outputIndex);
      const callId = typeof t.id === "string" && t.id !== "" ? t.id : callIdFor(this.head.id, outputIndex);
      const opened = this.add<CallItem>(
        () => ({
          kind: "fc",
          index: outputIndex,
          id,
          callId,
          name,
          args: "",
          prefix: `{"type":"response.function_call_arguments.delta","item_id":${q(id)},"output_index":${outputIndex},"delta":`,
          status: "in_progress",
        }),
        functionCallItem(id, callId, name, "", "in_progress", this.head.echo),
      );
      call = opened.item;
      this.calls.set(index, call);
      out += opened.out;
    } else if (call.name === "" && name !== "") call.name = name;
    if (args === "") return out;
    call.args += args;
    if (this.current !== call) return out;
    return out + this.delta("response.function_call_arguments.delta", call.prefix, args);
  }
}

/** The Responses stream for a request: its echo, and the serving attempt's id, model and time. */
export const responsesStream =
  (echo: ResponsesEcho, now?: () => number): StreamEncoderFor =>
  (h) =>
    new ResponsesStreamEncoder({
      id: h.id,
      model: h.model,
      createdAt: h.created,
      echo,
      ...(now ? { now } : {}),
    });
