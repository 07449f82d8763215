/**
 * Server-sent events as the Playground reads them: each event's `event:` name (null without one)
 * and its `data:` lines joined by a line break. Comments (`:`), `id:` and `retry:` are not needed
 * and are skipped; an event without data is not an event (the SSE format's own rule).
 */
export interface SseEvent {
  event: string | null;
  data: string;
}

/** One event's lines → the event, or null when it carries no data. */
function parseEvent(block: string): SseEvent | null {
  let event: string | null = null;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  return data.length > 0 ? { event, data: data.join("\n") } : null;
}

/**
 * The whole events in `buffer` and the unfinished rest (kept for the next read). Line ends may be
 * CRLF, LF or CR; a CR at the very end is kept back, as its LF may come in the next read.
 */
export function splitSse(buffer: string): { events: SseEvent[]; rest: string } {
  const held = buffer.endsWith("\r") ? "\r" : "";
  const text = (held ? buffer.slice(0, -1) : buffer).replace(/\r\n?/g, "\n");
  const blocks = text.split("\n\n");
  const rest = (blocks.pop() ?? "") + held;
  const events = blocks.map(parseEvent).filter((e): e is SseEvent => e !== null);
  return { events, rest };
}

/**
 * The events of a response body, in order, as they arrive. An event cut off by the end of the
 * body (no blank line after it) is still given: a server that ends without one loses nothing.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  // Streaming decode: a character whose bytes arrive in two reads is decoded once whole.
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const { events, rest } = splitSse(buffer + decoder.decode(value, { stream: true }));
      buffer = rest;
      yield* events;
    }
    buffer += decoder.decode();
    const last = parseEvent(buffer.replace(/\r\n?/g, "\n").replace(/\n+$/, ""));
    if (last) yield last;
  } finally {
    reader.releaseLock();
  }
}
