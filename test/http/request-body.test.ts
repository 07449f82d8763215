import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { readWholeBody } from "../../src/http/request-body.js";
import { MODEL_BODY_LIMIT as CHAT_BODY_LIMIT } from "../../src/http/routes/model-requests.js";
import { startListening } from "../helpers/server.js";

/**
 * readWholeBody on a real listening server: a body already buffered is taken at once (the
 * callback runs before readWholeBody returns), one still arriving is read as it comes, and the
 * limit and Content-Length checks answer Fastify's errors either way.
 */
let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

interface Outcome {
  /** The callback ran before readWholeBody returned (the body was taken at once). */
  atOnce: boolean;
  body?: string;
  code?: string;
  status?: number;
}

/** A server that reads each request's body with readWholeBody after `wait` and answers what it got. */
async function serve(limit: number, wait: (req: IncomingMessage) => Promise<void>) {
  const outcomes: Outcome[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void wait(req).then(() => {
      let returned = false;
      readWholeBody(req, req, limit, (err, body) => {
        const e: (Error & { code?: string; statusCode?: number }) | null = err;
        outcomes.push({
          atOnce: !returned,
          ...(body ? { body: body.toString("utf8") } : {}),
          ...(e ? { code: e.code ?? e.message, status: e.statusCode } : {}),
        });
        res.end(e ? "error" : "ok");
      });
      returned = true;
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  close = () =>
    new Promise((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  return { port: (server.address() as AddressInfo).port, outcomes };
}

/** Sends raw bytes in parts, `gapMs` apart, on one connection; resolves with what came back. */
function sendRaw(port: number, parts: string[], gapMs = 30): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (c: string) => (text += c));
    socket.on("error", fail);
    socket.on("close", () => done(text));
    socket.on("connect", () => {
      void (async () => {
        for (const [i, p] of parts.entries()) {
          if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
          socket.write(p);
        }
        setTimeout(() => socket.end(), gapMs * 3);
      })();
    });
  });
}

const head = (length: number | null, extra = "") =>
  `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${
    length === null ? "Transfer-Encoding: chunked\r\n" : `Content-Length: ${length}\r\n`
  }${extra}\r\n`;

describe("readWholeBody", () => {
  it("a body that came with its headers is taken at once, and the connection serves the next request", async () => {
    const { port, outcomes } = await serve(1024, () => new Promise((r) => setImmediate(r)));
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "héllo €" }] });
    const bytes = Buffer.byteLength(body);
    const answer = await sendRaw(port, [head(bytes) + body + head(bytes) + body]);
    expect(answer.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(outcomes).toEqual([
      { atOnce: true, body },
      { atOnce: true, body },
    ]);
  });

  it("a body that came with its headers, its parser run inside the request event, is taken from the buffer once the event returns", async () => {
    // As the app's parser runs once the authentication hook answers synchronously (a known key):
    // Node has handed over the request at its headers and buffers the body of the same read
    // after the 'request' event's handlers return.
    const got: { body: string; data: boolean }[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const listened: string[] = [];
      const on = req.on.bind(req);
      req.on = ((event: string, listener: (...a: unknown[]) => void) => {
        listened.push(event);
        return on(event, listener);
      }) as typeof req.on;
      readWholeBody(req, req, 1024, (err, body) => {
        got.push({ body: err ? String(err) : body!.toString("utf8"), data: listened.includes("data") });
        res.end("ok");
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    close = () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      });
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "héllo" }] });
    const bytes = Buffer.byteLength(body);
    const { port } = server.address() as AddressInfo;
    const answer = await sendRaw(port, [head(bytes) + body + head(bytes) + body]);
    expect(answer.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    // Neither read listened for the stream's data.
    expect(got).toEqual([
      { body, data: false },
      { body, data: false },
    ]);
  });

  it("a body still arriving is read as it comes; a chunked one too", async () => {
    const { port, outcomes } = await serve(1024, async () => undefined);
    const body = '{"a":"' + "x".repeat(100) + '"}';
    await sendRaw(port, [head(body.length), body.slice(0, 40), body.slice(40)]);
    const chunked = `${(20).toString(16)}\r\n${body.slice(0, 20)}\r\n${(body.length - 20).toString(16)}\r\n${body.slice(20)}\r\n0\r\n\r\n`;
    await sendRaw(port, [head(null), chunked]);
    expect(outcomes).toEqual([
      { atOnce: false, body },
      { atOnce: false, body },
    ]);
  });

  it("over the limit: 413, whether Content-Length says so or a chunked body grows past it", async () => {
    const { port, outcomes } = await serve(50, () => new Promise((r) => setImmediate(r)));
    const big = '{"a":"' + "x".repeat(100) + '"}';
    await sendRaw(port, [head(big.length) + big]);
    await sendRaw(port, [head(null), `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`]);
    expect(outcomes.map((o) => [o.atOnce, o.code, o.status])).toEqual([
      [true, "FST_ERR_CTP_BODY_TOO_LARGE", 413],
      [false, "FST_ERR_CTP_BODY_TOO_LARGE", 413],
    ]);
  });

  it("a client that goes away mid-body: the stream's error, as a 400", async () => {
    const { port, outcomes } = await serve(1024, async () => undefined);
    await sendRaw(port, [head(100), '{"a":'], 30);
    await new Promise((r) => setTimeout(r, 50));
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ atOnce: false, status: 400 });
  });
});

describe("JSON bodies through the app, on real sockets", () => {
  it("several model requests on one keep-alive connection are each answered in full", async () => {
    const s = await startListening();
    close = () => s.close();
    const key = (
      await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "body", limit: 1 } })
    ).json<{ key: string }>().key;
    const url = new URL(`${s.baseUrl}/chat/completions`);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (content: unknown) =>
      new Promise<{ status: number; text: string }>((done, fail) => {
        const body = JSON.stringify({ model: "mock/echo", messages: [{ role: "user", content }] });
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: "POST",
            agent,
            headers: {
              authorization: `Bearer ${key}`,
              "content-type": "application/json",
              "content-length": Buffer.byteLength(body),
            },
          },
          (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => (text += c));
            res.on("end", () => done({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on("error", fail);
        req.end(body);
      });
    try {
      for (const word of ["one", "two", "three"]) {
        const r = await send(`say ${word}`);
        expect(r.status).toBe(200);
        expect(JSON.parse(r.text).choices[0].message.content).toContain(word);
      }
      // An image as a data URL makes a body of megabytes: past the management routes' 1 MiB, within
      // the chat route's 32 MiB.
      const image = `data:image/png;base64,${"A".repeat(6 * 1024 * 1024)}`;
      const vision = await send([
        { type: "text", text: "say four" },
        { type: "image_url", image_url: { url: image } },
      ]);
      expect(vision.status, vision.text.slice(0, 300)).toBe(200);
      expect(JSON.parse(vision.text).choices[0].message.content).toContain("four");
      // A body over the chat route's limit on the same kind of connection: 413 in the spec's envelope.
      const r = await send("x".repeat(CHAT_BODY_LIMIT));
      expect(r.status).toBe(413);
      expect(JSON.parse(r.text).error.message).toMatch(/too large/);
      // A management route keeps 1 MiB.
      const mgmt = await fetch(`${s.baseUrl}/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "x".repeat(1024 * 1024) }),
      });
      expect(mgmt.status).toBe(413);
    } finally {
      agent.destroy();
    }
  });
});
