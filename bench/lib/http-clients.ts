import { spawn } from "node:child_process";

/**
 * HTTP load from a child process (so that the clients neither share the server's event loop nor
 * count in its CPU time): `clients` lanes, each POSTing the next body as soon as its previous
 * request is answered, over keep-alive connections (fetch). Any non-200 fails.
 */
export interface LoadResult {
  ms: number;
  latencies: number[];
  /** CPU time of the client process (all threads) during the run, ms. */
  cpuMs: number;
}

export interface PreparedLoad {
  /** Starts the requests; resolves when every body has been answered. */
  go(): Promise<LoadResult>;
}

/**
 * The child reads one line of JSON (its work) from stdin, answers "ready", and starts on the next
 * line ("go"), so that handing it hundreds of megabytes of bodies is not part of the measurement.
 */
const CLIENT_JS = `
const chunks = [];
let work = null;
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => {
  // Only the new chunk is searched for the end of the line (the work line is hundreds of MB).
  for (;;) {
    const nl = d.indexOf("\\n");
    if (nl < 0) {
      chunks.push(d);
      return;
    }
    chunks.push(d.slice(0, nl));
    d = d.slice(nl + 1);
    const line = chunks.join("");
    chunks.length = 0;
    if (work === null) {
      work = JSON.parse(line);
      process.stdout.write("ready\\n");
    } else void run(work);
  }
});
const run = async ({ url, key, bodies, clients, contentType }) => {
  try {
    const latencies = [];
    const cpu0 = process.cpuUsage();
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
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpu0);
    process.stdout.write(JSON.stringify({ ms, latencies, cpuMs: (cpu.user + cpu.system) / 1000 }) + "\\n");
  } catch (err) {
    process.stdout.write(JSON.stringify({ error: String((err && err.stack) || err) }) + "\\n");
  }
  process.exit(0);
};
`;

export async function prepareLoad(opts: {
  url: string;
  key: string;
  bodies: readonly string[];
  clients: number;
  contentType?: string;
}): Promise<PreparedLoad> {
  const child = spawn(process.execPath, ["-e", CLIENT_JS], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  const lines: string[] = [];
  let waiting: ((line: string) => void) | null = null;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d: string) => {
    out += d;
    let nl;
    while ((nl = out.indexOf("\n")) >= 0) {
      lines.push(out.slice(0, nl));
      out = out.slice(nl + 1);
    }
    if (waiting && lines.length > 0) {
      const w = waiting;
      waiting = null;
      w(lines.shift() as string);
    }
  });
  const exited = new Promise<never>((_, fail) =>
    child.once("exit", (code) => fail(new Error(`load client exited with ${String(code)}`))),
  );
  const nextLine = (): Promise<string> =>
    Promise.race([
      lines.length > 0
        ? Promise.resolve(lines.shift() as string)
        : new Promise<string>((done) => (waiting = done)),
      exited,
    ]);
  child.stdin.write(JSON.stringify({ contentType: "application/json", ...opts }) + "\n");
  if ((await nextLine()) !== "ready") throw new Error("load client did not get ready");
  return {
    go: async () => {
      child.stdin.end("go\n");
      const m = JSON.parse(await nextLine()) as LoadResult | { error: string };
      if ("error" in m) throw new Error(m.error);
      return m;
    },
  };
}

/** prepareLoad + go. */
export async function runLoad(opts: Parameters<typeof prepareLoad>[0]): Promise<LoadResult> {
  return (await prepareLoad(opts)).go();
}

/** One JSON request with a bearer key (a bench's setup: keys, budgets, destinations); non-2xx throws. */
export async function call(url: string, method: string, key: string, body?: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}
