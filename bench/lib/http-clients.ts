import { spawn } from "node:child_process";

/**
 * HTTP load from a child process (so that the clients neither share the server's event loop nor
 * count in its CPU time):
 * `clients` lanes, each POSTing its share of the bodies one after the other over keep-alive
 * connections (fetch). Resolves with the wall time and per-request latencies; any non-200 fails.
 */
export interface LoadResult {
  ms: number;
  latencies: number[];
}

const CLIENT_JS = `
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => run(JSON.parse(input)));
const run = async ({ url, key, bodies, clients, contentType }) => {
try {
  const latencies = [];
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    for (;;) {
      const i = next++;
      if (i >= bodies.length) return;
      const t = performance.now();
      const res = await fetch(url, {
        method: "POST",
        headers: { authorization: "Bearer " + key, "content-type": contentType },
        body: bodies[i],
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error("status " + res.status + ": " + text.slice(0, 500));
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: clients }, lane));
  process.stdout.write(JSON.stringify({ ms: performance.now() - started, latencies }));
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String((err && err.stack) || err) }));
}
};
`;

export function runLoad(opts: {
  url: string;
  key: string;
  bodies: readonly string[];
  clients: number;
  contentType?: string;
}): Promise<LoadResult> {
  const child = spawn(process.execPath, ["-e", CLIENT_JS], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d: string) => (out += d));
  child.stdin.end(JSON.stringify({ contentType: "application/json", ...opts }));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => {
      try {
        const m = JSON.parse(out) as LoadResult | { error: string };
        if ("error" in m) reject(new Error(m.error));
        else resolve(m);
      } catch {
        reject(new Error(`load client exited with ${String(code)}: ${out.slice(0, 500)}`));
      }
    });
  });
}
