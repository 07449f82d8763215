import type { Answer } from "../../chat/complete.js";
import type { ChatBody } from "../../chat/serve.js";
import type { StreamEncoder, StreamEncoderFor } from "../../chat/stream-encoder.js";
import type { NativeRequest, ProviderChunk } from "../../providers/provider.js";
import { estimatePrompt, promptTokensFor } from "../../tokens/count-tokens.js";
import { leftOutHeader } from "../left-out.js";
import { messagesToChat } from "./messages-request.js";
import { chatToMessage } from "./messages-response.js";
import { MessagesStreamEncoder } from "./messages-stream.js";

/**
 * The Anthropic Messages API as an inbound adapter (docs/gateway.md "Anthropic Messages"): the
 * request translated to the chat request the data plane runs (messages-request.ts), its whole
 * answer translated back (messages-response.ts), its stream written as Anthropic's named events
 * (messages-stream.ts). What the translation could not carry is named in a header.
 */
export interface MessagesRequest {
  body: ChatBody;
  /** The request as sent, for attempts on an `anthropic` provider (forwarded natively). */
  native: NativeRequest;
  stream: boolean;
  headers: Record<string, string>;
  encoderFor: StreamEncoderFor;
  answer: (chat: Answer) => Answer;
}

/** Header-safe text: a beta list is letters, digits, dashes and commas. */
const BETA_RE = /^[A-Za-z0-9_.,\- ]{1,2048}$/;

/**
 * Translates a Messages request body (throws the 400 naming the field). `anthropicBeta` is the
 * client's `anthropic-beta` header, passed on with the native request.
 */
export function messagesRequest(raw: unknown, anthropicBeta?: string): MessagesRequest {
  const { chat, leftOut } = messagesToChat(raw);
  const beta: Record<string, string> =
    anthropicBeta !== undefined && BETA_RE.test(anthropicBeta) ? { "anthropic-beta": anthropicBeta } : {};
  return {
    body: chat,
    native: { kind: "anthropic", body: raw as Record<string, unknown>, headers: beta },
    stream: chat.stream === true,
    headers: leftOutHeader(leftOut),
    encoderFor: (h) => new MessagesStream(new MessagesStreamEncoder(h)),
    answer: (a) => ({ headers: a.headers, body: chatToMessage(a.body) }),
  };
}

/** The Messages stream as the data plane's StreamEncoder. */
class MessagesStream implements StreamEncoder {
  readonly done = "";

  constructor(private readonly enc: MessagesStreamEncoder) {}

  open(): string {
    // message_start waits for the first chunk: an Anthropic upstream's first chunk carries the
    // prompt's counts, which message_start reports.
    return "";
  }

  chunk(c: ProviderChunk): string {
    return this.enc.start(c.prompt) + this.enc.chunk(c);
  }

  finish(usage: Record<string, unknown>, finishReason: string | null): string {
    return this.enc.end(usage, finishReason);
  }

  fail(status: number, message: string, errorType: string): string {
    return this.enc.start() + this.enc.fail(status, message, errorType);
  }
}

/** POST /messages/count_tokens: the prompt's tokens as Gatehouse estimates them (nothing is charged). */
export function countMessageTokens(raw: unknown): { input_tokens: number } {
  const { chat } = messagesToChat(
    typeof raw === "object" && raw !== null && !Array.isArray(raw) ? { max_tokens: 1, ...raw } : raw,
  );
  return { input_tokens: promptTokensFor(estimatePrompt(chat.messages, chat.tools), "anthropic") };
}
