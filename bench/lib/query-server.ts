import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ensureBuilt, SERVER_ARGV } from "../../test/helpers/compiled.js";

const ROOT = resolve(import.meta.dirname, "../..");

export interface BenchServer {
  /** `http://127.0.0.1:<port>/api/v1` */
  base: string;
  /** Process id of the server child (for its CPU time in /proc). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * The real composition root in a child process, as an operator runs it (`npm start`: the compiled
 * build, dist/src/main.js, rebuilt first when a source is newer), on the given data directory and
 * environment (`nodeArgs` e.g. ["--cpu-prof"] to profile it). Resolves once it logs "gatehouse
 * listening". `root` runs another checkout's build instead (bench/gateway-ab.ts), which must be
 * built already (`npm install` there builds it).
 */
export async function startBenchServer(
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
  root: string = ROOT,
): Promise<BenchServer> {
  let main: readonly string[] = SERVER_ARGV;
  if (resolve(root) === ROOT) ensureBuilt();
  else {
    main = [join(root, "dist", "src", "main.js")];
    if (!existsSync(main[0] as string)) throw new Error(`${root} is not built: run npm install there`);
  }
  const argv = [...nodeArgs, ...main];
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, argv, {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PORT: "0", ...env },
  });
  let out = "";
  let err = "";
  let listening = false;
  child.stderr.on("data", (b: Buffer) => {
    if (err.length < 100_000) err += b.toString("utf8");
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const base = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`server did not start in 60 s:\n${out}\n${err}`)), 60_000);
    child.stdout.on("data", (b: Buffer) => {
      if (listening) return; // request logs: drained, not kept
      out += b.toString("utf8");
      for (const line of out.split("\n")) {
        if (!line.startsWith("{") || !line.includes("gatehouse listening")) continue;
        listening = true;
        clearTimeout(timer);
        done((JSON.parse(line) as { base: string }).base);
        return;
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      fail(new Error(`server exited before listening:\n${out}\n${err}`));
    });
  });
  return {
    base,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
