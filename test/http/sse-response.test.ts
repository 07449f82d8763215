import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { SseSink } from "../../src/gateway/chat/stream.js";
import { sseResponse } from "../../src/http/routes/sse-response.js";

/**
 * The stream's response sink on a real listening server: what one turn writes leaves as one
 * write, the head leaves at the end of the turn that wrote it even when no event follows, and
 * the end carries what is still pending, in order.
 */
let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

/** A server whose one handler drives the sink; counts the response's write calls. */
async function serve(drive: (sink: SseSink, res: ServerResponse) => Promise<void>) {
  const writes: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    const write = res.write.bind(res);
    let n = 0;
    res.write = ((...args: Parameters<typeof write>) => {
      n++;
      return write(...args);
    }) as typeof res.write;
    const sink = sseResponse(res, (headers) =>
      res.writeHead(200, { "content-type": "text/event-stream", ...headers }),
    );
    void drive(sink, res).finally(() => writes.push(n));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  close = () => new Promise((done) => server.close(() => done()));
  return { port: (server.address() as AddressInfo).port, writes };
}

const get = (port: number) =>
  new Promise<IncomingMessage>((done, fail) => request({ port, path: "/" }, done).on("error", fail).end());

const body = (res: IncomingMessage) =>
  new Promise<string>((done) => {
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (c: string) => (text += c));
    res.on("end", () => done(text));
  });

const turn = () => new Promise((r) => setImmediate(r));

describe("sseResponse", () => {
  it("one write per turn, events in order, the end carrying what is pending", async () => {
    const { port, writes } = await serve(async (sink) => {
      sink.start({ "x-test": "1" });
      sink.write("a\n\n");
      sink.write("b\n\n");
      await turn();
      sink.write("c\n\n");
      sink.write("d\n\n");
      await turn();
      sink.write("e\n\n");
      sink.end("data: [DONE]\n\n");
    });
    const res = await get(port);
    expect(res.headers["x-test"]).toBe("1");
    expect(await body(res)).toBe("a\n\nb\n\nc\n\nd\n\ne\n\ndata: [DONE]\n\n");
    expect(writes).toEqual([2]); // the two turns; "e" left with the end
  });

  it("settling: the turn's events wait for the end of its I/O and leave with an end that comes by then, in one write", async () => {
    const { port, writes } = await serve(async (sink) => {
      sink.start({});
      sink.write("a\n\n");
      sink.write("usage\n\n");
      sink.settling();
      // The record's write, as the journal makes it: at the end of the turn's I/O (an earlier
      // immediate), then the answer's end in the microtasks that follow it.
      await turn();
      sink.end("data: [DONE]\n\n");
    });
    const res = await get(port);
    expect(await body(res)).toBe("a\n\nusage\n\ndata: [DONE]\n\n");
    expect(writes).toEqual([0]); // everything left with the end
  });

  it("settling: when the end takes longer than the turn, the pending events leave at the end of that turn", async () => {
    let release: () => void = () => undefined;
    const later = new Promise<void>((r) => (release = r));
    const { port, writes } = await serve(async (sink) => {
      sink.start({});
      sink.write("a\n\n");
      sink.settling();
      await later; // a commit that takes a while
      sink.end("data: [DONE]\n\n");
    });
    const res = await get(port);
    let text = "";
    res.setEncoding("utf8");
    const first = new Promise<void>((done) => res.once("data", (c: string) => ((text += c), done())));
    await first; // arrives while the end is still held back
    expect(text).toBe("a\n\n");
    res.on("data", (c: string) => (text += c));
    const ended = new Promise((done) => res.on("end", done));
    release();
    await ended;
    expect(text).toBe("a\n\ndata: [DONE]\n\n");
    expect(writes).toEqual([1]);
  });

  it("sends the head at the end of the turn that wrote it, before any event", async () => {
    let release: () => void = () => undefined;
    const later = new Promise<void>((r) => (release = r));
    const { port } = await serve(async (sink) => {
      sink.start({ "x-early": "yes" });
      await later;
      sink.end("data: [DONE]\n\n");
    });
    const res = await get(port); // resolves on the head: the handler is still waiting
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-early"]).toBe("yes");
    release();
    expect(await body(res)).toBe("data: [DONE]\n\n");
  });

  it("drops writes once the response is destroyed, without throwing", async () => {
    let failure: unknown = null;
    const { port, writes } = await serve(async (sink, res) => {
      try {
        sink.start({});
        sink.write("a\n\n");
        res.destroy();
        sink.write("b\n\n");
        await turn();
        sink.end("data: [DONE]\n\n");
      } catch (err) {
        failure = err;
      }
    });
    await get(port).then(body, () => "");
    await new Promise((r) => setTimeout(r, 20));
    expect(failure).toBeNull();
    expect(writes).toEqual([0]);
  });
});
