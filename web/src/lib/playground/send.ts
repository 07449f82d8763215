import { chatSurface } from "./chat-surface.ts";
import { messagesSurface } from "./messages-surface.ts";
import { responsesSurface } from "./responses-surface.ts";
import { readSse } from "./sse.ts";
import {
  NO_ANSWER,
  StreamFailed,
  type Answer,
  type Conversation,
  type PlaygroundApi,
  type Surface,
} from "./surface.ts";
import { errorMessage } from "./wire-json.ts";

/** The surfaces the Playground can send through, in the order it offers them. */
export const SURFACES: Readonly<Record<PlaygroundApi, Surface>> = {
  chat: chatSurface,
  responses: responsesSurface,
  messages: messagesSurface,
};

export interface SendOptions {
  base: string;
  /** An ordinary API key, sent as a Bearer token (every surface takes it so). */
  key: string;
  model: string;
  stream: boolean;
  /** Each step of a streamed answer, as it arrives. */
  onUpdate?: (answer: Answer) => void;
}

export interface Sent {
  answer: Answer;
  /** The generation's id (`x-gatehouse-generation-id`), for the Generations page. */
  generationId: string | null;
}

/**
 * The conversation through one surface, streamed or not. An error answer throws an Error with the
 * API's message; a failed stream throws StreamFailed (with the answer up to the failure), and so
 * does a stream that ends before its last event.
 */
export async function send(surface: Surface, conversation: Conversation, o: SendOptions): Promise<Sent> {
  const res = await fetch(`${o.base}${surface.path}`, {
    method: "POST",
    credentials: "omit",
    headers: {
      ...surface.headers,
      authorization: `Bearer ${o.key}`,
      "content-type": "application/json",
      accept: o.stream ? "text/event-stream" : "application/json",
    },
    body: JSON.stringify(surface.request(conversation, o.model, o.stream)),
  });
  const generationId = res.headers.get("x-gatehouse-generation-id");
  const streamed = (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
  if (!res.ok || !streamed || !res.body) {
    const body: unknown = await res.json().catch(() => null);
    if (!res.ok) throw new Error(errorMessage(body) ?? `HTTP ${res.status}`);
    return { answer: surface.whole(body), generationId };
  }
  let answer = NO_ANSWER;
  for await (const ev of readSse(res.body)) {
    answer = surface.step(answer, ev);
    o.onUpdate?.(answer);
  }
  if (!answer.done) throw new StreamFailed("the stream ended before its last event", answer);
  return { answer, generationId };
}
