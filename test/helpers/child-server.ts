import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SERVER_ARGV } from "./compiled.js";

/**
 * The real composition root (src/main.ts) in a child process, as an operator runs it: PORT=0,
 * the listening address read from the "gatehouse listening" log line. Every child and temporary
 * directory is tracked so that `killAll()` (in afterAll) leaves nothing behind.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;

export interface ChildServer {
  child: ChildProcessWithoutNullStreams;
  /** `http://127.0.0.1:<port>/api/v1` */
  base: string;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** GATEHOUSE_DATA_DIR: pass it to a restart to keep the data */
  dataDir: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcessWithoutNullStreams>();
const dirs: string[] = [];

export function tempDataDir(): string {
  const d = mkdtempSync(join(tmpdir(), "gh-scale-"));
  dirs.push(d);
  return d;
}

/** SIGKILLs every child still running and removes the temporary data directories. */
export function killAll(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  children.clear();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** Starts the compiled server (dist/src/main.js); resolves once it listens, rejects with its output otherwise. */
export async function startServer(env: Record<string, string>): Promise<ChildServer> {
  const dataDir = env.GATEHOUSE_DATA_DIR ?? tempDataDir();
  const child = spawn(process.execPath, [...SERVER_ARGV], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PORT: "0",
      LOG_LEVEL: "info",
      // Destinations may reach the tests' loopback receivers (an operator's local collector).
      BROADCAST_ALLOWED_PRIVATE_HOSTS: "127.0.0.1/8,::1",
      ...env,
      GATEHOUSE_DATA_DIR: dataDir,
    },
  });
  children.add(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString("utf8")));
  child.stderr.on("data", (b: Buffer) => (err += b.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on("exit", (code, signal) => done({ code, signal })),
  );
  const base = await new Promise<string>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`server did not start within ${START_TIMEOUT_MS} ms:\n${out}\n${err}`)),
      START_TIMEOUT_MS,
    );
    const look = () => {
      for (const line of out.split("\n")) {
        if (!line.startsWith("{") || !line.includes("gatehouse listening")) continue;
        clearTimeout(timer);
        child.stdout.off("data", look);
        done((JSON.parse(line) as { base: string }).base);
        return;
      }
    };
    child.stdout.on("data", look);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      fail(new Error(`server exited (${code ?? signal}) before listening:\n${out}\n${err}`));
    });
  });
  return { child, base, origin: new URL(base).origin, dataDir, stdout: () => out, stderr: () => err, exited };
}

/** SIGKILL, as a crash would, and the wait for the exit. */
export async function killServer(s: ChildServer): Promise<void> {
  s.child.kill("SIGKILL");
  await s.exited;
  children.delete(s.child);
}

/** SIGTERM and a bounded wait for the exit. */
export async function stopServer(
  s: ChildServer,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return s.exited;
  s.child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      s.exited,
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`no exit within ${STOP_TIMEOUT_MS} ms`)), STOP_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    children.delete(s.child);
  }
}

export interface HttpResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** One JSON request with a bounded time, the body parsed when it is JSON. */
export async function http(
  url: string,
  opts: { method?: string; key?: string | null; body?: unknown } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, {
    method: opts.method ?? "GET",
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Polls `/readyz` until it answers 200 or `ms` have passed; returns the last answer. */
export async function readyWithin(origin: string, ms: number): Promise<HttpResult> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await http(`${origin}/readyz`);
    if (res.status === 200 || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 100));
  }
}
