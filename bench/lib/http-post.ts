import { Agent, request } from "node:http";

export interface Posted {
  status: number;
  text: string;
  /** From the call until the last byte of the answer arrived (before parsing it), ms. */
  ms: number;
}

/**
 * A lean HTTP/1.1 client over one keep-alive connection (node:http, as curl, wrk or a gateway's
 * own HTTP stack would talk to the server): the request timed from the call to the last byte of
 * the answer. Node's fetch (undici) adds its own CPU per call (web streams, promise chains; ~1 ms
 * on a 60 KB answer on this machine): bench/query.ts times it separately.
 */
export function keepAliveClient(base: string): {
  post(path: string, headers: Record<string, string>, body: string): Promise<Posted>;
  close(): void;
} {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    post: (path, headers, body) =>
      new Promise<Posted>((done, fail) => {
        const t = performance.now();
        const req = request(
          `${base}${path}`,
          {
            method: "POST",
            agent,
            headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("error", fail);
            res.on("end", () =>
              done({
                status: res.statusCode ?? 0,
                text: Buffer.concat(chunks).toString("utf8"),
                ms: performance.now() - t,
              }),
            );
          },
        );
        req.on("error", fail);
        req.end(body);
      }),
    close: () => agent.destroy(),
  };
}
