import { request } from "node:http";

/**
 * A streamed chat completion whose client walks away: POST `body` (with `stream: true`) to the
 * listening server at `baseUrl` (…/api/v1) with `key`, read until more than `events` SSE events
 * have arrived, then destroy the request. Resolves the generation id from the answer's headers;
 * rejects when no such events arrive within 5 s.
 */
export function leaveStreamAfter(
  baseUrl: string,
  key: string,
  body: Record<string, unknown>,
  events: number,
): Promise<string> {
  const url = new URL(`${baseUrl}/chat/completions`);
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
