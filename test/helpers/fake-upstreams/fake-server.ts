import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A local HTTP server standing in for a provider. Each request is recorded (path, headers, parsed
 * body) with a promise that settles when its connection side ends, saying whether the answer was
 * complete or the client went away first: that is how tests observe cancellation.
 */
export interface RecordedRequest {
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
  /** The client's port: two requests on one kept-alive connection share it. */
  remotePort: number | undefined;
  /** Resolves when the response closes: `aborted` is true when the client left before the end. */
  closed: Promise<{ aborted: boolean }>;
}

export type FakeHandler = (req: RecordedRequest, res: ServerResponse, socket: Socket) => void | Promise<void>;

export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  /** TCP connections open right now (kept-alive ones included). */
  openConnections(): number;
  close(): Promise<void>;
}

export async function startFakeServer(handler: FakeHandler): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8");
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // recorded as text
      }
      const closed = new Promise<{ aborted: boolean }>((resolve) => {
        res.on("close", () => resolve({ aborted: !res.writableFinished }));
      });
      const rec: RecordedRequest = {
        path: req.url ?? "",
        headers: req.headers,
        body,
        remotePort: req.socket.remotePort,
        closed,
      };
      requests.push(rec);
      void Promise.resolve(handler(rec, res, req.socket)).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(599);
        res.end(String(err));
      });
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Writes one SSE event (with an `event:` line when named), ending with the blank line. */
export function sse(res: ServerResponse, data: unknown, event?: string): void {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  res.write(`${event ? `event: ${event}\n` : ""}data: ${payload}\n\n`);
}

/** Sends nothing at all, not even headers, until the client goes away: an upstream that hangs. */
export function neverAnswer(res: ServerResponse): void {
  const t = setInterval(() => undefined, 1_000);
  res.on("close", () => clearInterval(t));
}

/** Keeps writing SSE comments until the client goes away: a stream that never ends. */
export function neverEnd(res: ServerResponse): void {
  const t = setInterval(() => res.write(": keep-alive\n\n"), 50);
  res.on("close", () => clearInterval(t));
}
