import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SURFACES, send } from "../../../web/src/lib/playground/send.js";
import { StreamFailed, type Answer } from "../../../web/src/lib/playground/surface.js";

/**
 * send (web/src/lib/playground/send.ts) against a stand-in server on 127.0.0.1: what it sends, a
 * whole answer, a stream read as it arrives, the API's error message, a stream cut short.
 */
type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
let server: Server;
let base = "";
let handler: Handler = (_q, _b, res) => res.end();
let seen: { url: string; headers: IncomingMessage["headers"]; body: unknown } | null = null;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (b: Buffer) => (body += b.toString("utf8")));
    req.on("end", () => {
      seen = { url: req.url ?? "", headers: req.headers, body: JSON.parse(body) };
      handler(req, body, res);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

const conversation = { system: "", turns: [{ role: "user" as const, text: "Hi" }] };

describe("send", () => {
  it("posts the surface's body with the key, and reads a whole answer and the generation id", async () => {
    handler = (_q, _b, res) => {
      res.writeHead(200, { "content-type": "application/json", "x-gatehouse-generation-id": "gen-1-x" });
      res.end(
        JSON.stringify({
          content: [{ type: "text", text: "Echo: Hi" }],
          usage: { input_tokens: 3, output_tokens: 2 },
        }),
      );
    };
    const sent = await send(SURFACES.messages, conversation, {
      base,
      key: "sk-k",
      model: "mock/echo",
      stream: false,
    });
    expect(sent).toEqual({
      answer: { text: "Echo: Hi", usage: { prompt: 3, completion: 2, cost: null }, done: true },
      generationId: "gen-1-x",
    });
    expect(seen?.url).toBe("/api/v1/messages");
    expect(seen?.headers.authorization).toBe("Bearer sk-k");
    expect(seen?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(seen?.body).toEqual(SURFACES.messages.request(conversation, "mock/echo", false));
  });

  it("shows each step of a stream as it arrives", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    handler = (_q, _b, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "x-gatehouse-generation-id": "gen-2-y" });
      res.write('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Ech');
      res.write('o"}\n\n');
      // The rest waits until the first piece was shown.
      void gate.then(() => {
        res.write(
          'event: response.completed\ndata: {"type":"response.completed","response":{"output_text":"Echo: Hi","usage":{"input_tokens":4,"output_tokens":3,"cost":0.5}}}\n\ndata: [DONE]\n\n',
        );
        res.end();
      });
    };
    const steps: Answer[] = [];
    const sent = await send(SURFACES.responses, conversation, {
      base,
      key: "k",
      model: "m",
      stream: true,
      onUpdate: (a) => {
        steps.push(a);
        release();
      },
    });
    expect(steps[0]).toEqual({ text: "Echo", usage: null, done: false });
    expect(sent).toEqual({
      answer: { text: "Echo: Hi", usage: { prompt: 4, completion: 3, cost: 0.5 }, done: true },
      generationId: "gen-2-y",
    });
    expect(seen?.headers.accept).toBe("text/event-stream");
  });

  it("throws the API's error message (either envelope), or the status when the body is not JSON", async () => {
    handler = (_q, _b, res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "authentication_error", message: "bad key" } }));
    };
    await expect(
      send(SURFACES.messages, conversation, { base, key: "k", model: "m", stream: true }),
    ).rejects.toThrow("bad key");
    handler = (_q, _b, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html>bad gateway</html>");
    };
    await expect(
      send(SURFACES.chat, conversation, { base, key: "k", model: "m", stream: false }),
    ).rejects.toThrow("HTTP 502");
  });

  it("throws StreamFailed, with the text so far, when a stream ends before its last event", async () => {
    handler = (_q, _b, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end('data: {"choices":[{"delta":{"content":"Ec"}}]}\n\n');
    };
    const failed = await send(SURFACES.chat, conversation, {
      base,
      key: "k",
      model: "m",
      stream: true,
    }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StreamFailed);
    expect((failed as StreamFailed).message).toBe("the stream ended before its last event");
    expect((failed as StreamFailed).answer.text).toBe("Ec");
  });
});
