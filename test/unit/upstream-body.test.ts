import { describe, expect, it } from "vitest";
import { HIGH_WATER_BYTES, UpstreamBody } from "../../src/gateway/providers/upstream-body.js";

function flow() {
  const calls: string[] = [];
  return {
    calls,
    flow: {
      pause: () => calls.push("pause"),
      resume: () => calls.push("resume"),
      abort: (e: Error) => calls.push(`abort:${e.message}`),
    },
  };
}

const kib = (n: number, fill = "a"): Buffer => Buffer.alloc(n * 1024, fill);

describe("UpstreamBody", () => {
  it("pauses the connection past the high-water mark and resumes once the reader catches up", async () => {
    const f = flow();
    const body = new UpstreamBody(f.flow);
    const chunks = HIGH_WATER_BYTES / 1024 / 8;
    for (let i = 0; i < chunks - 1; i++) body.push(kib(8));
    expect(f.calls).toEqual([]);
    body.push(kib(8));
    expect(f.calls).toEqual(["pause"]);
    body.push(kib(8)); // already paused: not asked again
    expect(f.calls).toEqual(["pause"]);
    const it = body[Symbol.asyncIterator]();
    let read = 0;
    while (f.calls.length === 1) {
      await it.next();
      read++;
    }
    expect(f.calls).toEqual(["pause", "resume"]);
    // Resumed only once under the low-water mark (16 KiB), not at the first read: of the 9 chunks
    // of 8 KiB queued, 8 were read.
    expect(read).toBe(chunks);
  });

  it("hands out chunks in order, waits for more, and ends", async () => {
    const body = new UpstreamBody(flow().flow);
    const got: string[] = [];
    const reading = (async () => {
      for await (const c of body) got.push(c.toString());
    })();
    body.push(Buffer.from("a"));
    await Promise.resolve();
    body.push(Buffer.from("b"));
    setTimeout(() => {
      body.push(Buffer.from("c"));
      body.end();
    }, 10);
    await reading;
    expect(got).toEqual(["a", "b", "c"]);
  });

  it("a failure reaches the reader after the chunks that came before it", async () => {
    const body = new UpstreamBody(flow().flow);
    body.push(Buffer.from("a"));
    body.fail(new Error("reset"));
    const it = body[Symbol.asyncIterator]();
    expect((await it.next()).value?.toString()).toBe("a");
    await expect(it.next()).rejects.toThrow("reset");
    expect(body.settled).toBe(true);
  });

  it("text() never pauses, joins the chunks and drops a byte-order mark", async () => {
    const f = flow();
    const body = new UpstreamBody(f.flow);
    const text = body.text();
    body.push(Buffer.from([0xef, 0xbb, 0xbf]));
    for (let i = 0; i < 20; i++) body.push(kib(8, "z"));
    body.push(Buffer.from("é"));
    body.end();
    const s = await text;
    expect(f.calls).toEqual([]);
    expect(s).toBe("z".repeat(160 * 1024) + "é");
  });

  it("text() resumes a connection paused before it was called", async () => {
    const f = flow();
    const body = new UpstreamBody(f.flow);
    for (let i = 0; i < 10; i++) body.push(kib(8));
    expect(f.calls).toEqual(["pause"]);
    const text = body.text();
    expect(f.calls).toEqual(["pause", "resume"]);
    body.end();
    expect((await text).length).toBe(80 * 1024);
  });

  it("drain() drops what is queued and what follows, resumes, and aborts past its limit", () => {
    const f = flow();
    const body = new UpstreamBody(f.flow);
    for (let i = 0; i < 10; i++) body.push(kib(8));
    body.drain(16 * 1024);
    expect(f.calls).toEqual(["pause", "resume"]);
    body.push(kib(8));
    body.push(kib(8));
    expect(f.calls).toEqual(["pause", "resume"]);
    body.push(Buffer.from("x"));
    expect(f.calls).toEqual(["pause", "resume", "abort:undrained upstream body"]);
  });
});
