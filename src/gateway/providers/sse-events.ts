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
    },
  });
  const decoder = new TextDecoder();
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
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (overflow) throw malformed("an event over 4 MiB", hasOutput());
      while (pending.length > 0) yield pending.shift()!;
    }
  } catch (err) {
    throw exchange.failure(err);
  }
  parser.feed(decoder.decode());
  parser.reset({ consume: true });
  while (pending.length > 0) yield pending.shift()!;
}
