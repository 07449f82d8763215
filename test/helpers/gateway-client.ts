import type { FastifyInstance } from "fastify";

/**
 * Where a chat completion goes: a listening server's base URL (`http://127.0.0.1:<port>/api/v1`),
 * anything that carries one (a ListeningApp, a ChildServer's `{ baseUrl }`), or an app reached
 * through inject() (a TestApp). A value with a base URL is reached over the socket.
 */
export type GatewayTarget = string | { baseUrl: string } | { app: FastifyInstance };

export interface ChatOptions {
  /** Extra request headers (after authorization and content-type). */
  headers?: Record<string, string>;
  /** Abort a socket request after this long; default 15 s. */
  timeoutMs?: number;
}

/** An answer to POST /chat/completions, read to its end. */
export interface ChatAnswer {
  status: number;
  headers: Headers;
  /** The body as received. */
  text: string;
  /** The parsed body when it is JSON (a completion or an error), else undefined. */
  json: any;
  /** The SSE events that carry a JSON object (`data: {…}`), parsed, in order; [] when not streamed. */
  events: Record<string, any>[];
  /** The completion's usage: the JSON body's, or the first event that carries one. */
  usage: Record<string, any> | undefined;
  /** `usage.cost`, when there is a usage. */
  cost: number | undefined;
  /** The x-gatehouse-generation-id header, or null. */
  id: string | null;
  /** Milliseconds from sending to the body's end. */
  ms: number;
}

/** The one user message most tests send. */
export const HI = [{ role: "user", content: "Hi" }] as const;

/** The `data: {…}` events of an SSE body, parsed. */
export function sseEvents(text: string): Record<string, any>[] {
  return text
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)) as Record<string, any>);
}

const chatHeaders = (key: string, opts: ChatOptions): Record<string, string> => ({
  authorization: `Bearer ${key}`,
  "content-type": "application/json",
  ...opts.headers,
});

const chatPayload = (body: Record<string, unknown>): string => JSON.stringify({ messages: HI, ...body });

/**
 * POST a chat completion (`{ messages: HI, ...body }`) to a listening server and hand back the
 * fetch Response unread, for a test that reads a stream as it arrives.
 */
export function postChat(
  target: string | { baseUrl: string },
  key: string,
  body: Record<string, unknown>,
  opts: ChatOptions = {},
): Promise<Response> {
  const baseUrl = typeof target === "string" ? target : target.baseUrl;
  return fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: chatHeaders(key, opts),
    body: chatPayload(body),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
  });
}

/**
 * POST a chat completion (`{ messages: HI, ...body }`: a body with its own messages keeps them)
 * with `key` as the bearer, and read the whole answer, JSON or streamed.
 */
export async function chat(
  target: GatewayTarget,
  key: string,
  body: Record<string, unknown>,
  opts: ChatOptions = {},
): Promise<ChatAnswer> {
  const t0 = performance.now();
  let status: number;
  let answerHeaders: Headers;
  let text: string;
  if (typeof target === "object" && !("baseUrl" in target)) {
    const r = await target.app.inject({
      method: "POST",
      url: "/api/v1/chat/completions",
      headers: chatHeaders(key, opts),
      payload: chatPayload(body),
    });
    status = r.statusCode;
    answerHeaders = new Headers();
    for (const [name, value] of Object.entries(r.headers)) {
      if (value !== undefined)
        answerHeaders.set(name, Array.isArray(value) ? value.join(", ") : String(value));
    }
    text = r.body;
  } else {
    const r = await postChat(target, key, body, opts);
    status = r.status;
    answerHeaders = r.headers;
    text = await r.text();
  }
  const ms = performance.now() - t0;
  return readAnswer(status, answerHeaders, text, ms);
}

function readAnswer(status: number, headers: Headers, text: string, ms: number): ChatAnswer {
  const type = headers.get("content-type") ?? "";
  let json: any;
  if (type.includes("json")) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  const events = type.includes("event-stream") ? sseEvents(text) : [];
  const usage = (json?.usage as Record<string, any> | undefined) ?? events.find((e) => e.usage)?.usage;
  return {
    status,
    headers,
    text,
    json,
    events,
    usage,
    cost: usage?.cost as number | undefined,
    id: headers.get("x-gatehouse-generation-id"),
    ms,
  };
}
