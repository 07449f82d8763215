import type { SseEvent } from "./sse.ts";

/**
 * What the Playground sends and shows, the same whichever API surface carries it: a surface module
 * (chat-surface.ts, responses-surface.ts, messages-surface.ts) builds its own request from the
 * conversation and reads its own answer, whole or streamed, back into an Answer.
 */
export type PlaygroundApi = "chat" | "responses" | "messages";

export interface Turn {
  role: "user" | "assistant";
  text: string;
}

export interface Conversation {
  /** Instructions for the model ("" for none): a system message, `instructions` or `system`. */
  system: string;
  /** The turns in order, the last one the user's. */
  turns: readonly Turn[];
}

/** Usage in one vocabulary: prompt tokens (cache reads and writes included), completion tokens. */
export interface Usage {
  prompt: number;
  completion: number;
  /** USD charged, or null when the answer does not say. */
  cost: number | null;
}

export interface Answer {
  text: string;
  usage: Usage | null;
  /** The stream's last event arrived (a whole answer is always done). */
  done: boolean;
}

export const NO_ANSWER: Answer = { text: "", usage: null, done: false };

export interface Surface {
  api: PlaygroundApi;
  /** What the Playground calls it. */
  label: string;
  /** Its path under /api/v1. */
  path: string;
  /** Headers the surface's own clients send besides the key and content type. */
  headers: Readonly<Record<string, string>>;
  request(conversation: Conversation, model: string, stream: boolean): Record<string, unknown>;
  /** A whole (not streamed) answer's body → the Answer. Throws on a failed answer. */
  whole(body: unknown): Answer;
  /** The Answer after one more event of a stream. Throws on the stream's error event. */
  step(answer: Answer, event: SseEvent): Answer;
}

/**
 * A stream's failure after it opened: the error's message, and the answer up to it (the text so
 * far and the usage charged for it, when the failure carried one), which the page still shows.
 */
export class StreamFailed extends Error {
  constructor(
    message: string,
    readonly answer: Answer,
  ) {
    super(message);
  }
}
