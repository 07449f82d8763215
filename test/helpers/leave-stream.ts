import { request, type ClientRequest } from "node:http";

/**
 * A streamed answer whose client walks away: POST `body` (with `stream: true`) to the listening
 * server at `baseUrl` (…/api/v1) + `path` (chat completions unless given: any API surface) with
 * `key`, read until more than `events` SSE events have arrived, then destroy the request.
 * Resolves the generation id from the answer's headers; rejects when no such events arrive
 * within 5 s.
 */
export function leaveStreamAfter(
  baseUrl: string,
  key: string,
  body: Record<string, unknown>,
  events: number,
  path = "/chat/completions",
): Promise<string> {
  const url = new URL(`${baseUrl}${path}`);
  return new Promise<string>((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      },
      (res) => {
        let seen = "";
        res.on("data", (d: Buffer) => {
          seen += d.toString();
          if (seen.split("\n\n").length > events) {
            req.destroy();
            resolve(res.headers["x-gatehouse-generation-id"] as string);
          }
        });
      },
    );
    req.on("error", () => undefined);
    req.end(JSON.stringify(body));
    setTimeout(() => reject(new Error("no chunks")), 5_000);
  });
}

/**
 * POST `body` to `baseUrl`/chat/completions with `key` over node:http, the request left to the
 * caller, who may `destroy()` it to leave (as a closed browser tab does; fetch's abort can leave
 * the server's connection open). Socket errors after that are ignored.
 */
export function sendChat(baseUrl: string, key: string, body: Record<string, unknown>): ClientRequest {
  const url = new URL(`${baseUrl}/chat/completions`);
  const req = request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  });
  req.on("error", () => undefined);
  req.end(JSON.stringify(body));
  return req;
}

/**
 * A chat completion whose client walks away before any answer: POST `body` (streamed or not) to
 * the listening server at `baseUrl` (…/api/v1) with `key`, and destroy the request as soon as
 * `reached()` says the upstream has it (polled every 5 ms). Resolves once the request is closed;
 * rejects when `reached()` stays false for 5 s.
 */
export function leaveOnceSent(
  baseUrl: string,
  key: string,
  body: Record<string, unknown>,
  reached: () => boolean,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = sendChat(baseUrl, key, body);
    req.on("close", () => resolve());
    const t0 = Date.now();
    const poll = setInterval(() => {
      if (reached()) {
        clearInterval(poll);
        req.destroy();
      } else if (Date.now() - t0 > 5_000) {
        clearInterval(poll);
        req.destroy();
        reject(new Error("the upstream never got the request"));
      }
    }, 5);
  });
}
