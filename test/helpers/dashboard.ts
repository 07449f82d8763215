/// <reference lib="dom" />
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { gatehouse, ROOT } from "./cli.js";
import { SERVER_ARGV } from "./compiled.js";

/**
 * Helpers of the dashboard's browser tests, screenshots and bench: a real Gatehouse process on a
 * demo-seeded data directory, and Debian's Chromium driven by playwright-core.
 */
export const CHROMIUM = process.env.GATEHOUSE_CHROMIUM ?? "/usr/bin/chromium";
export const WEB_DIR = join(ROOT, "dist", "web");

export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Why the browser suites cannot run here, or null when they can. In CI (CI=true) a missing
 * Chromium or web build is a failure, never a skip: .ci/run installs Chromium and `npm install`
 * builds the dashboard.
 */
export function browserUnavailable(): string | null {
  const problems: string[] = [];
  if (!existsSync(CHROMIUM)) problems.push(`no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
  if (!existsSync(join(WEB_DIR, "index.html")))
    problems.push(`no dashboard build in ${WEB_DIR} (npm run build:web)`);
  if (problems.length === 0) return null;
  const reason = problems.join("; ");
  if (process.env.CI === "true") throw new Error(`browser tests cannot run in CI: ${reason}`);
  process.stdout.write(`SKIPPED dashboard browser tests: ${reason}\n`);
  return reason;
}

/** Chromium with a fresh profile directory (removed by close()); one per test file. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "gh-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface DemoServer {
  origin: string;
  key: string;
  dataDir: string;
  summary: Record<string, unknown>;
  stop(): Promise<void>;
}

/** Seeds a fresh data directory with `gatehouse demo` and starts the real server on it (port 0). */
export async function startDemoServer(
  opts: { generations?: number; days?: number; env?: Record<string, string> } = {},
): Promise<DemoServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "gh-dash-"));
  // Destinations may reach the tests' loopback addresses (an operator's local collector).
  const env = {
    GATEHOUSE_DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    BROADCAST_ALLOWED_PRIVATE_HOSTS: "127.0.0.1/8,::1",
    ...opts.env,
  };
  const run = await gatehouse(
    ["demo", "--json", "--generations", String(opts.generations ?? 3000), "--days", String(opts.days ?? 14)],
    env,
  );
  if (run.code !== 0) throw new Error(`gatehouse demo failed:\n${run.stdout}\n${run.stderr}`);
  const summary = JSON.parse(run.stdout) as Record<string, unknown>;
  const key = summary.management_key;
  if (typeof key !== "string")
    throw new Error("gatehouse demo made no management key (the data directory was not empty)");
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [...SERVER_ARGV], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PORT: "0", ...env, LOG_LEVEL: "info" },
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (b: Buffer) => (err += b.toString("utf8")));
  const origin = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`server did not start:\n${out}\n${err}`)), 60_000);
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString("utf8");
      for (const line of out.split("\n")) {
        if (!line.includes("gatehouse listening")) continue;
        clearTimeout(timer);
        done(new URL((JSON.parse(line) as { base: string }).base).origin);
        return;
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`server exited with ${code}:\n${out}\n${err}`));
    });
  });
  return {
    origin,
    key,
    dataDir,
    summary,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((d) => child.on("exit", d));
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((d) => setTimeout(d, 10_000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A call of the server's management API from Node (the management key unless `key` is given). */
export async function apiCall(
  server: DemoServer,
  path: string,
  init: { method?: string; body?: unknown; key?: string } = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.origin}/api/v1${path}`, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${init.key ?? server.key}`,
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

/** A new tab signed in with the server's management key, at `path`; a page error fails the test. */
export async function signedIn(context: BrowserContext, server: DemoServer, path = "/"): Promise<Page> {
  const page = await context.newPage();
  page.on("pageerror", (e) => {
    throw e;
  });
  await page.goto(`${server.origin}${path}`);
  await page.getByLabel("Management key").fill(server.key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  return page;
}

let axeSource: string | null = null;

/**
 * axe-core's serious and critical violations on the page as it is now, one line each. Evaluated
 * through the DevTools protocol, which the page's CSP does not govern.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as any).axe;
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return (r.violations as any[]).map((v) => ({
      id: String(v.id),
      impact: String(v.impact),
      nodes: Number(v.nodes.length),
      help: String(v.help),
    }));
  });
  return (result as { id: string; impact: string; nodes: number; help: string }[])
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id} (${v.nodes} nodes): ${v.help}`);
}
