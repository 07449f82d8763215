import { describe, expect, it } from "vitest";
import { readSse, splitSse } from "../../../web/src/lib/playground/sse.js";

/** The Playground's SSE reading (web/src/lib/playground/sse.ts). */
const bodyOf = (parts: string[]): ReadableStream<Uint8Array> => {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(enc.encode(p));
      c.close();
    },
  });
};

const collect = async (parts: string[]) => {
  const out = [];
  for await (const ev of readSse(bodyOf(parts))) out.push(ev);
  return out;
};

describe("splitSse", () => {
  it("gives whole events with their names and keeps the unfinished rest", () => {
    expect(splitSse('event: message_start\ndata: {"a":1}\n\ndata: [DONE]\n\nevent: pi')).toEqual({
      events: [
        { event: "message_start", data: '{"a":1}' },
        { event: null, data: "[DONE]" },
      ],
      rest: "event: pi",
    });
  });

  it("takes CRLF and CR line ends, joins data lines, skips comments and events without data", () => {
    const { events, rest } = splitSse(": keep-alive\r\n\r\nevent: x\r\ndata: one\r\ndata:two\r\rid: 3\n\n");
    expect(events).toEqual([{ event: "x", data: "one\ntwo" }]);
    expect(rest).toBe("");
  });

  it("keeps a final CR back: its LF may come in the next read", () => {
    const first = splitSse("data: a\r\n\r");
    expect(first.events).toEqual([]);
    expect(splitSse(`${first.rest}\ndata: b\n\n`).events).toEqual([
      { event: null, data: "a" },
      { event: null, data: "b" },
    ]);
  });

  it("removes one space after the colon only", () => {
    expect(splitSse("data:  two spaces\n\n").events).toEqual([{ event: null, data: " two spaces" }]);
  });
});

describe("readSse", () => {
  it("gives the events of a body whose reads cut events, lines and characters anywhere", async () => {
    const text = 'event: a\ndata: {"t":"héllo"}\n\nevent: b\ndata: 2\n\n';
    const bytes = new TextEncoder().encode(text);
    // One byte per read: the two bytes of "é" arrive apart.
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const b of bytes) c.enqueue(new Uint8Array([b]));
        c.close();
      },
    });
    const out = [];
    for await (const ev of readSse(body)) out.push(ev);
    expect(out).toEqual([
      { event: "a", data: '{"t":"héllo"}' },
      { event: "b", data: "2" },
    ]);
  });

  it("gives a last event that has no blank line after it", async () => {
    expect(await collect(["data: 1\n\n", "event: end\ndata: 2\n"])).toEqual([
      { event: null, data: "1" },
      { event: "end", data: "2" },
    ]);
  });
});
