import { StringDecoder } from "node:string_decoder";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { malformed } from "./malformed.js";
import type { UpstreamExchange } from "./upstream-http.js";

/** One pending event may not exceed this (a line that never ends is a broken upstream). */
const MAX_EVENT_CHARS = 4 * 1024 * 1024;

/**
 * The server-sent events of an upstream answer, as they arrive. Stops the first-byte deadline on
 * the first body chunk; a transport failure or timeout throws UpstreamError from the iteration
 * where it happened. `hasOutput` tells whether the caller has yielded anything yet (see malformed).
 * The caller closes the exchange.
 */
export async function* sseEvents(
  exchange: UpstreamExchange,
  hasOutput: () => boolean,
): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  let overflow = false;
  const parser = createParser({
    maxBufferSize: MAX_EVENT_CHARS,
    onEvent: (e) => pending.push(e),
    onError: (e) => {
      // Unknown fields and bad `retry:` values are ignored, as browsers do; only a runaway buffer stops the stream.
      if (e.type === "max-buffer-size-exceeded") overflow = true;
      // Except `error: {…}`, the line llama.cpp's server writes for a failure (its
      // server_sent_event(sink, "error", …)): an event named error, so that its message is not lost.
      else if (e.type === "unknown-field" && e.field === "error")
        pending.push({ id: undefined, event: "error", data: e.value ?? "" });
    },
  });
  // UTF-8 whose characters may be cut between reads. A StringDecoder, not a TextDecoder: the same
  // text at half the CPU per stream (bench/experiments/per-request.ts). A leading byte-order mark,
  // which SSE ignores and a TextDecoder drops, is dropped by dropMark, in the first text decoded
  // (a first read may hold less than a whole character).
  const decoder = new StringDecoder("utf8");
  let marked = false;
  const dropMark = (text: string): string => {
    if (marked || text === "") return text;
    marked = true;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  };
  let started = false;
  // Read by hand, not with for-await: leaving a for-await early destroys the body (and so the
  // connection), but a stream that ended with its last event should leave the connection to the
  // pool. exchange.close() decides between draining and destroying.
  const reader = (exchange.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await reader.next();
      if (next.done) break;
      const chunk = next.value;
      if (!started) {
        started = true;
        exchange.firstByte();
      }
      parser.feed(dropMark(decoder.write(chunk)));
      if (overflow) throw malformed("an event over 4 MiB", hasOutput());
      while (pending.length > 0) yield pending.shift()!;
    }
  } catch (err) {
    throw exchange.failure(err);
  }
  parser.feed(dropMark(decoder.end()));
  parser.reset({ consume: true });
  while (pending.length > 0) yield pending.shift()!;
}
