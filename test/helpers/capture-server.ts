import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { EncodedRequest } from "../../src/broadcast/encoders/encoder.js";

/** A request as a local receiver saw it on the socket. */
export interface Captured {
  method: string;
  /** Path and query as received. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A real HTTP receiver on 127.0.0.1 (random port) that records what arrives and answers with
 * `status`. `send` delivers an encoded request to it over the socket: the request's origin is
 * replaced by the receiver's (vendors' hosts are not reachable here); path, query, method,
 * headers and body go as encoded.
 */
export async function startCaptureServer(status = 200): Promise<{
  origin: string;
  received: Captured[];
  send(request: EncodedRequest): Promise<{ status: number; captured: Captured }>;
  close(): Promise<void>;
}> {
  const received: Captured[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
      });
      // No keep-alive: a reused socket can race the server closing it after a long synchronous test step.
      res.writeHead(status, { "content-type": "application/json", connection: "close" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    received,
    async send(request) {
      const u = new URL(request.url);
      // fetch sets Host and Content-Length itself. Passing Content-Length along would also depend
      // on which undici serves global fetch: loading the npm package (as the gateway's upstream
      // client does) installs its Agent as fetch's dispatcher when none is set yet, and that one
      // checks the header more strictly than Node's own.
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([k]) => k !== "host" && k.toLowerCase() !== "content-length"),
      );
      const res = await fetch(`${origin}${u.pathname}${u.search}`, {
        method: request.method,
        headers,
        body: typeof request.body === "string" ? request.body : Buffer.from(request.body),
      });
      await res.arrayBuffer();
      return { status: res.status, captured: received.at(-1)! };
    },
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
