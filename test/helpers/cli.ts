import { spawn } from "node:child_process";
import { CLI_ARGV, ROOT } from "./compiled.js";

/** The compiled CLI, as the `gatehouse` bin runs it (compiled.ts says why tests use dist/). */
export { CLI_ARGV, ROOT };

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `gatehouse` CLI in a child process with only the given environment (plus PATH and
 * HOME); `input` is written to its standard input.
 */
export function gatehouse(
  args: string[],
  env: Record<string, string>,
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...CLI_ARGV, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`gatehouse ${args.join(" ")} timed out\n${stdout}\n${stderr}`));
    }, opts.timeoutMs ?? 120_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
  });
}
