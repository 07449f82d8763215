import { spawn } from "node:child_process";

/**
 * A local OTLP/HTTP JSON receiver on 127.0.0.1 in its own process (as a collector would be), so
 * that its parsing is neither on the delivery worker's thread nor in the bench process's CPU
 * time. It parses every body, reads the generation id of each generation span
 * (`gen_ai.response.id`) and reports `[ids, arrival time]` in milliseconds since the epoch
 * (`performance.timeOrigin + performance.now()`, comparable across processes).
 */
const RECEIVER = `
const { createServer } = require("node:http");
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const at = performance.timeOrigin + performance.now();
    const ids = [];
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    for (const rs of body.resourceSpans ?? [])
      for (const ss of rs.scopeSpans ?? [])
        for (const span of ss.spans ?? []) {
          const id = (span.attributes ?? []).find((a) => a.key === "gen_ai.response.id");
          if (id !== undefined) ids.push(id.value.stringValue);
        }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
    process.send([ids, at]);
  });
});
server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
process.on("message", (m) => { if (m === "stop") server.close(() => process.exit(0)); });
`;

export interface Receiver {
  url: string;
  /** First arrival time of each generation id, ms since the epoch. */
  arrivals: Map<string, number>;
  stop(): Promise<void>;
}

export const nowEpochMs = (): number => performance.timeOrigin + performance.now();

export async function startReceiverProcess(): Promise<Receiver> {
  const child = spawn(process.execPath, ["-e", RECEIVER], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const arrivals = new Map<string, number>();
  const port = await new Promise<number>((done, fail) => {
    child.once("error", fail);
    child.on("message", (m: { port: number } | [string[], number]) => {
      if (!Array.isArray(m)) return done(m.port);
      const [ids, at] = m;
      for (const id of ids) if (!arrivals.has(id)) arrivals.set(id, at);
    });
  });
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    arrivals,
    stop: async () => {
      const exited = new Promise((d) => child.once("exit", d));
      child.send("stop");
      await exited;
    },
  };
}
