import type { Answer } from "../../chat/complete.js";
import type { ChatBody } from "../../chat/serve.js";
import type { StreamEncoderFor } from "../../chat/stream-encoder.js";
import { leftOutHeader } from "../left-out.js";
import { responsesToChat } from "./responses-request.js";
import { chatToResponse, type ChatCompletionAnswer } from "./responses-result.js";
import { responsesStream } from "./responses-stream.js";
import { nativeResponsesRequest } from "./responses-native.js";
import type { NativeRequest } from "../../providers/provider.js";
import type { Json } from "./body-fields.js";

/**
 * The OpenAI Responses API as an inbound adapter (docs/surfaces/responses.md): the request
 * translated to the chat request the data plane runs (responses-request.ts), its whole answer
 * translated back (responses-result.ts), its stream written as Responses events
 * (responses-stream.ts). What the translation left out is named in a header. To a provider that
 * speaks the Responses API itself (`responses: true`) the request goes as sent instead (`native`,
 * responses-native.ts); its answer is read into the chat shape and written by the same encoders.
 */
export interface ResponsesSurfaceRequest {
  body: ChatBody;
  /** The request as sent, for attempts on a provider with `responses: true` (forwarded natively). */
  native: NativeRequest;
  stream: boolean;
  headers: Record<string, string>;
  encoderFor: StreamEncoderFor;
  answer: (chat: Answer) => Answer;
}

const unixNow = (): number => Math.floor(Date.now() / 1000);

/**
 * Translates a Responses request body (throws the 400 naming the field). `now` gives
 * `completed_at` (Unix seconds); `created_at` is the generation's own creation time.
 */
export function responsesRequest(raw: unknown, now: () => number = unixNow): ResponsesSurfaceRequest {
  const { chat, leftOut, echo } = responsesToChat(raw);
  return {
    body: chat,
    // responsesToChat refused anything but an object.
    native: nativeResponsesRequest(raw as Json),
    stream: chat.stream === true,
    headers: leftOutHeader(leftOut),
    encoderFor: responsesStream(echo, now),
    answer: (a) => ({
      headers: a.headers,
      // chat/complete.ts's chat.completion body: id, model, created, choices, usage.
      body: chatToResponse(a.body as unknown as ChatCompletionAnswer, echo, {
        createdAt: typeof a.body.created === "number" ? a.body.created : now(),
        completedAt: now(),
      }),
    }),
  };
}
