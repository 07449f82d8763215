import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";

/**
 * The compiled build as `npm start` and `npx gatehouse` run it: plain `node` on dist/, no tsx in
 * the process (the test fails if the child could load TypeScript). dist/ is what `npm install`
 * builds (`prepare`); when it is missing or older than a source file, beforeAll rebuilds it with
 * `npm run build:server`, so this test never passes against a stale or absent build.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const MAIN = join(ROOT, "dist", "src", "main.js");
const BIN = join(ROOT, "bin", "gatehouse.js");
const KEY_RE = /sk-gh-v1-[0-9a-f]{64}/;
const run = promisify(execFile);

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

const dirs: string[] = [];
let child: ChildProcessWithoutNullStreams | undefined;

beforeAll(async () => {
  const built = existsSync(MAIN) ? statSync(MAIN).mtimeMs : 0;
  const stale = Math.max(
    newestSource(join(ROOT, "src")),
    statSync(join(ROOT, "tsconfig.build.json")).mtimeMs,
  );
  if (built < stale) {
    process.stderr.write("compiled.test: dist/ is missing or stale; running `npm run build:server`\n");
    await run("npm", ["run", "build:server"], { cwd: ROOT, timeout: 300_000 });
  }
  expect(existsSync(MAIN)).toBe(true);
}, 320_000);

afterAll(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Only PATH and HOME: no NODE_OPTIONS, so nothing can register a TypeScript loader. */
const baseEnv = () => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" });

describe("compiled build", () => {
  it("dist/ holds the compiled worker and no TypeScript", () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
      );
    const files = walk(join(ROOT, "dist", "src"));
    expect(files.some((f) => f.endsWith("prepare-worker.js"))).toBe(true);
    expect(files.filter((f) => f.endsWith(".ts"))).toEqual([]);
  });

  it("`node dist/src/main.js` serves /healthz, an authenticated call and an ingest (worker threads), the CLI reads what it wrote, SIGTERM stops it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gh-compiled-"));
    dirs.push(dataDir);
    const c = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: { ...baseEnv(), PORT: "0", GATEHOUSE_DATA_DIR: dataDir, INGEST_WORKERS: "1" },
    });
    child = c;
    let out = "";
    let err = "";
    c.stdout.on("data", (b: Buffer) => (out += b.toString("utf8")));
    c.stderr.on("data", (b: Buffer) => (err += b.toString("utf8")));
    const exited = new Promise<number | null>((done) => c.on("exit", (code) => done(code)));
    const base = await new Promise<string>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no start in 60 s:\n${out}\n${err}`)), 60_000);
      c.stdout.on("data", () => {
        const line = out.split("\n").find((l) => l.includes("gatehouse listening"));
        if (!line) return;
        clearTimeout(timer);
        done((JSON.parse(line) as { base: string }).base);
      });
      void exited.then((code) => {
        clearTimeout(timer);
        fail(new Error(`exited with ${code}:\n${out}\n${err}`));
      });
    });
    const key = KEY_RE.exec(out)?.[0];
    expect(key).toBeDefined();
    const origin = new URL(base).origin;
    const auth = { authorization: `Bearer ${key}` };

    const health = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(10_000) });
    expect(health.status).toBe(200);
    expect((await fetch(`${base}/workspaces`, { signal: AbortSignal.timeout(10_000) })).status).toBe(401);
    const ws = await fetch(`${base}/workspaces`, { headers: auth, signal: AbortSignal.timeout(10_000) });
    expect(ws.status).toBe(200);
    const wsBody = (await ws.json()) as { data: { slug: string }[] };
    expect(wsBody.data.map((w) => w.slug)).toContain("default");

    // NDJSON ingest goes through the compiled worker thread (prepare-worker.js).
    const record = {
      id: "compiled-1",
      created_at: new Date(Date.now() - 60_000).toISOString(),
      api_key_hash: hashKey(key!),
      model: "openai/gpt-4o",
      provider: "OpenAI",
      tokens_prompt: 10,
      tokens_completion: 2,
      usage: 0.01,
      latency_ms: 100,
    };
    const ingest = await fetch(`${base}/activity/generations`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/x-ndjson" },
      body: `${JSON.stringify(record)}\n`,
      signal: AbortSignal.timeout(20_000),
    });
    expect(ingest.status).toBe(200);
    expect(await ingest.json()).toMatchObject({ data: { accepted: 1, duplicates: 0 } });

    c.kill("SIGTERM");
    const code = await Promise.race([
      exited,
      new Promise<never>((_, fail) => setTimeout(() => fail(new Error("no exit within 10 s")), 10_000)),
    ]);
    expect(code).toBe(0);
    expect(err).not.toMatch(/tsx|ERR_UNKNOWN_FILE_EXTENSION/);

    // The compiled CLI (bin/gatehouse.js) on the same data directory, once the server let go.
    const cli = await run(process.execPath, [BIN, "org", "list", "--json"], {
      cwd: ROOT,
      env: { ...baseEnv(), GATEHOUSE_DATA_DIR: dataDir },
      timeout: 60_000,
    });
    const orgs = JSON.parse(cli.stdout) as unknown[];
    expect(orgs).toHaveLength(1);
  }, 150_000);
});
