import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * Runs an ES module given as text (`node --input-type=module -e js argv…`) in a child process;
 * `first` resolves with the first line it prints, parsed as JSON (a port once it listens, or a
 * load run's result), and rejects if it exits before printing one.
 */
export function childJson(js: string, argv: string[] = []): { child: ChildProcess; first: Promise<unknown> } {
  const child = spawn(process.execPath, ["--input-type=module", "-e", js, ...argv], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const first = new Promise<unknown>((done, fail) => {
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d: string) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl >= 0) done(JSON.parse(out.slice(0, nl)));
    });
    child.once("exit", (code) => fail(new Error(`child exited with ${String(code)}`)));
  });
  return { child, first };
}

/**
 * CPU time (user + system) of a process so far, in ms: every thread's, or with `tid` that one
 * thread's (the main thread's tid is the pid); null off Linux.
 */
export function cpuMsOf(pid: number, tid?: number): number | null {
  try {
    const stat = readFileSync(
      tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`,
      "utf8",
    );
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks: 100 Hz
  } catch {
    return null;
  }
}
