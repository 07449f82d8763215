import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import { runCli } from "../../src/cli/run-cli.js";
import { CLI_ARGV, ROOT } from "./compiled.js";

/** The compiled CLI, as the `gatehouse` bin runs it (compiled.ts says why tests use dist/). */
export { CLI_ARGV, ROOT };

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  /** Written to the command's standard input (read by `import -`). */
  input?: string;
}

export interface CliProcessOptions extends CliRunOptions {
  /** The child is killed after this long (default 120 s). */
  timeoutMs?: number;
}

/** The environment a command sees: only the given variables, plus PATH and HOME. */
const commandEnv = (env: Record<string, string>): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "",
  ...env,
});

/**
 * Runs a `gatehouse` command in this process: the CLI's own entry (`runCli`, which the bin calls
 * with the process's streams and environment) with captured output, the given environment and
 * `input` as standard input; the result is the exit code the bin would set. The command opens and
 * closes its real stores as in a process of its own, without paying a Node start and the loading
 * of every module for each command (a second or more each, on a busy machine several).
 * What only a process shows (the bin's exit status, real standard input and output, files made
 * private by its umask) is tested with gatehouseProcess in test/process/cli-bin.test.ts.
 */
export async function gatehouse(
  args: string[],
  env: Record<string, string>,
  opts: CliRunOptions = {},
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    env: commandEnv(env),
    stdin: Readable.from(opts.input === undefined ? [] : [Buffer.from(opts.input)]),
  });
  return { code, stdout, stderr };
}

/**
 * Runs the real `gatehouse` bin (the compiled CLI) in a child process with only the given
 * environment (plus PATH and HOME); `input` is written to its standard input.
 */
export function gatehouseProcess(
  args: string[],
  env: Record<string, string>,
  opts: CliProcessOptions = {},
): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...CLI_ARGV, ...args], {
      cwd: ROOT,
      env: commandEnv(env),
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
