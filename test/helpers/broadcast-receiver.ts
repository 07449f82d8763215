import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What the receiver does with one request. */
export type Behaviour =
  | { kind: "ok"; status?: number }
  | { kind: "status"; status: number; headers?: Record<string, string>; body?: string }
  | { kind: "hang"; ms: number }
  | { kind: "reset" }
  | { kind: "echo-auth"; status: number };

export interface ReceivedRequest {
  at: number;
  method: string;
  headers: IncomingMessage["headers"];
  body: string;
  /** Generation ids of the OTLP spans in the body (gen_ai.response.id). */
  ids: string[];
  status: number | null;
}

interface OtlpAttr {
  key: string;
  value: { stringValue?: string };
}
interface OtlpBody {
  resourceSpans?: { scopeSpans?: { spans?: { attributes?: OtlpAttr[] }[] }[] }[];
}

export function idsOfOtlp(body: string): string[] {
  if (body === "") return [];
  const parsed = JSON.parse(body) as OtlpBody;
  const out: string[] = [];
  for (const rs of parsed.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        const id = span.attributes?.find((a) => a.key === "gen_ai.response.id")?.value.stringValue;
        if (id !== undefined) out.push(id);
      }
    }
  }
  return out;
}

/**
 * A local OTLP/HTTP JSON receiver on 127.0.0.1 (random port) for Broadcast tests: records every
 * request, decodes the generation ids of its spans, and answers as told (a queue of behaviours,
 * then the default). `inFlight` tracks ids being received at once (concurrency checks).
 */
export class TestReceiver {
  readonly requests: ReceivedRequest[] = [];
  readonly delivered = new Map<string, number>();
  readonly queue: Behaviour[] = [];
  fallback: Behaviour = { kind: "ok" };
  /** Delay before answering an accepted request (to widen concurrency windows). */
  okDelayMs = 0;
  readonly inFlight = new Set<string>();
  overlaps = 0;
  private server: Server | null = null;
  private sockets = new Set<Socket>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/v1/traces`;
  }

  async start(port = 0): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on("connection", (s) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
    await new Promise<void>((done) => server.listen(port, "127.0.0.1", done));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and cuts every open connection (the receiver is down). */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    for (const sock of this.sockets) sock.destroy();
    if (s) await new Promise<void>((done) => s.close(() => done()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const ids = idsOfOtlp(body);
    const entry: ReceivedRequest = {
      at: Date.now(),
      method: req.method ?? "",
      headers: req.headers,
      body,
      ids,
      status: null,
    };
    this.requests.push(entry);
    const b = this.queue.shift() ?? this.fallback;
    switch (b.kind) {
      case "ok": {
        for (const id of ids) {
          if (this.inFlight.has(id)) this.overlaps++;
          this.inFlight.add(id);
        }
        if (this.okDelayMs > 0) await new Promise((d) => setTimeout(d, this.okDelayMs));
        for (const id of ids) {
          this.inFlight.delete(id);
          this.delivered.set(id, (this.delivered.get(id) ?? 0) + 1);
        }
        entry.status = b.status ?? 200;
        res.writeHead(entry.status, { "content-type": "application/json" }).end("{}");
        return;
      }
      case "status":
        entry.status = b.status;
        res.writeHead(b.status, b.headers ?? {}).end(b.body ?? "");
        return;
      case "echo-auth":
        entry.status = b.status;
        res.writeHead(b.status).end(`bad credentials: ${JSON.stringify(req.headers)}`);
        return;
      case "hang":
        await new Promise((d) => setTimeout(d, b.ms));
        if (!res.destroyed) res.writeHead(200).end("{}");
        return;
      case "reset":
        req.socket.destroy();
        return;
    }
  }
}

/** Polls until fn() is true or the time is up (then throws with the message). */
export async function waitFor(fn: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await fn()) return;
    await new Promise((d) => setTimeout(d, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}
