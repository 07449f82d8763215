import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  PG_SKIP_REASON,
  PG_URL,
  REDIS_SKIP_REASON,
  REDIS_URL,
  freshPostgresDatabase,
} from "../helpers/stores.js";
import { CLI_ARGV } from "../helpers/cli.js";
import { SERVER_ARGV } from "../helpers/compiled.js";

/**
 * The real server as an operator runs it: `npm start` (dist/src/main.js) in a child process,
 * a temporary data directory, PORT=0 (the port is read from the "gatehouse listening" log line).
 */
const ROOT = resolve(import.meta.dirname, "../..");
const KEY_RE = /sk-gh-v1-[0-9a-f]{64}/g;
const START_TIMEOUT_MS = 30_000;

interface Server {
  child: ChildProcessWithoutNullStreams;
  base: string;
  origin: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcessWithoutNullStreams>();
const dirs: string[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDataDir(): string {
  const d = mkdtempSync(join(tmpdir(), "gh-proc-"));
  dirs.push(d);
  return d;
}

function launch(env: Record<string, string>) {
  const child = spawn(process.execPath, [...SERVER_ARGV], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PORT: "0", LOG_LEVEL: "info", ...env },
  });
  children.add(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString("utf8")));
  child.stderr.on("data", (b: Buffer) => (err += b.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on("exit", (code, signal) => done({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Starts the server and resolves once it listens; fails with its output if it exits or hangs. */
async function start(env: Record<string, string>): Promise<Server> {
  const p = launch(env);
  const base = await new Promise<string>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`server did not start:\n${p.stdout()}\n${p.stderr()}`)),
      START_TIMEOUT_MS,
    );
    const look = () => {
      for (const line of p.stdout().split("\n")) {
        if (!line.includes("gatehouse listening")) continue;
        clearTimeout(timer);
        done((JSON.parse(line) as { base: string }).base);
        return;
      }
    };
    p.child.stdout.on("data", look);
    void p.exited.then(({ code }) => {
      clearTimeout(timer);
      fail(new Error(`server exited with ${code}:\n${p.stdout()}\n${p.stderr()}`));
    });
  });
  return { ...p, base, origin: new URL(base).origin };
}

/** Sends SIGTERM and waits (bounded) for the exit. */
async function stop(s: Server, signal: NodeJS.Signals = "SIGTERM") {
  const started = Date.now();
  s.child.kill(signal);
  const result = await Promise.race([
    s.exited,
    new Promise<never>((_, fail) => setTimeout(() => fail(new Error("no exit within 10 s")), 10_000)),
  ]);
  return { ...result, ms: Date.now() - started };
}

const get = (url: string, key?: string) =>
  fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {}, signal: AbortSignal.timeout(10_000) });

/** Exit of a server that must not start, bounded. */
async function failedStart(env: Record<string, string>) {
  const p = launch(env);
  const result = await Promise.race([
    p.exited,
    new Promise<never>((_, fail) => setTimeout(() => fail(new Error("still running after 20 s")), 20_000)),
  ]);
  return { ...result, stdout: p.stdout(), stderr: p.stderr() };
}

describe("server process", () => {
  const dataDir = tempDataDir();
  let firstKey = "";

  it("first start prints a management key once, outside the logs, and the key works", async () => {
    const s = await start({ GATEHOUSE_DATA_DIR: dataDir });
    try {
      const keys = s.stdout().match(KEY_RE) ?? [];
      expect(keys).toHaveLength(1);
      firstKey = keys[0]!;
      // The key is in the banner only: no structured log line carries it.
      const logLines = s
        .stdout()
        .split("\n")
        .filter((l) => l.startsWith("{"));
      expect(logLines.length).toBeGreaterThan(0);
      for (const l of logLines) expect(l).not.toContain(firstKey);
      expect(s.stdout()).toContain("shown only this once");

      const ready = await get(`${s.origin}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        status: "ready",
        checks: { record_store: "ok", activity_store: "ok" },
      });

      const ok = await get(`${s.base}/workspaces`, firstKey);
      expect(ok.status).toBe(200);
      const body = (await ok.json()) as { data: { slug: string }[] };
      expect(body.data.map((w) => w.slug)).toEqual(["default"]);

      const none = await get(`${s.base}/workspaces`);
      expect(none.status).toBe(401);
      const wrong = await get(`${s.base}/workspaces`, `sk-gh-v1-${"0".repeat(64)}`);
      expect(wrong.status).toBe(401);
      expect(await wrong.json()).toEqual({
        error: { code: 401, message: expect.any(String), metadata: null },
      });

      const missing = await get(`${s.base}/no-such-route`, firstKey);
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: { code: number } }).error.code).toBe(404);
      expect(missing.headers.get("x-request-id")).toBeTruthy();

      // The data directory now holds the SQLite file and a private encryption key.
      expect(statSync(join(dataDir, "gatehouse.sqlite")).isFile()).toBe(true);
      expect(statSync(join(dataDir, "encryption.key")).mode & 0o777).toBe(0o600);
    } finally {
      const exit = await stop(s);
      expect(exit.code).toBe(0);
    }
  });

  it("SIGTERM shuts down gracefully with exit code 0 within a few seconds", async () => {
    const s = await start({ GATEHOUSE_DATA_DIR: dataDir });
    expect((await get(`${s.origin}/healthz`)).status).toBe(200);
    const exit = await stop(s, "SIGTERM");
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(5_000);
    expect(s.stdout()).toContain("shutting down");
    await expect(get(`${s.origin}/healthz`)).rejects.toThrow();
  });

  it("SIGINT (Ctrl-C) shuts down the same way", async () => {
    const s = await start({ GATEHOUSE_DATA_DIR: dataDir });
    const exit = await stop(s, "SIGINT");
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(5_000);
  });

  it("a restart on the same data directory prints no new key and keeps the old one working", async () => {
    expect(firstKey).not.toBe("");
    const s = await start({ GATEHOUSE_DATA_DIR: dataDir });
    try {
      expect(s.stdout().match(KEY_RE)).toBeNull();
      expect(s.stdout()).not.toContain("first start");
      expect((await get(`${s.base}/workspaces`, firstKey)).status).toBe(200);
    } finally {
      expect((await stop(s)).code).toBe(0);
    }
  });

  it("the CLI works on the SQLite file while the server runs, and its key works at once", async () => {
    const s = await start({ GATEHOUSE_DATA_DIR: dataDir });
    try {
      const cli = await new Promise<{ code: number | null; stdout: string }>((done) => {
        const c = spawn(process.execPath, [...CLI_ARGV, "org", "create", "Live", "--json"], {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", GATEHOUSE_DATA_DIR: dataDir },
          timeout: 30_000,
        });
        let out = "";
        c.stdout.on("data", (b: Buffer) => (out += b.toString("utf8")));
        c.on("exit", (code) => done({ code, stdout: out }));
      });
      expect(cli.code).toBe(0);
      const created = JSON.parse(cli.stdout) as { management_key: string; workspace_id: string };
      const res = await get(`${s.base}/workspaces`, created.management_key);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: { id: string }[] };
      expect(body.data.map((w) => w.id)).toEqual([created.workspace_id]);
    } finally {
      expect((await stop(s)).code).toBe(0);
    }
  });

  it("with GATEHOUSE_BOOTSTRAP_KEY that key works and nothing is printed", async () => {
    const bootKey = `sk-gh-v1-${"a1".repeat(32)}`;
    const s = await start({ GATEHOUSE_DATA_DIR: tempDataDir(), GATEHOUSE_BOOTSTRAP_KEY: bootKey });
    try {
      expect(s.stdout().match(KEY_RE)).toBeNull();
      expect(s.stdout()).not.toContain("first start");
      expect(s.stdout()).not.toContain(bootKey);
      expect(s.stderr()).not.toContain(bootKey);
      const res = await get(`${s.base}/workspaces`, bootKey);
      expect(res.status).toBe(200);
    } finally {
      expect((await stop(s)).code).toBe(0);
    }
  });

  it("with GATEHOUSE_METRICS_TOKEN, /metrics answers that bearer token with the process's metrics", async () => {
    const token = `scrape-${"m".repeat(24)}`;
    const s = await start({ GATEHOUSE_DATA_DIR: tempDataDir(), GATEHOUSE_METRICS_TOKEN: token });
    try {
      expect((await get(`${s.origin}/metrics`)).status).toBe(401);
      const res = await get(`${s.origin}/metrics`, token);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toMatch(/^process_cpu_seconds_total \d/m);
      // The families are there before anything happened: a counter at no samples yet.
      expect(text).toContain("# TYPE gatehouse_broadcast_requests_total counter");
      expect(text).toContain("# TYPE gatehouse_gateway_generations_total counter");
    } finally {
      expect((await stop(s)).code).toBe(0);
    }
    expect(s.stdout()).not.toContain(token);
    expect(s.stderr()).not.toContain(token);
  });

  it.each([
    [{ PORT: "abc" }, ["PORT"]],
    [{ GATEHOUSE_METRICS_TOKEN: "short" }, ["GATEHOUSE_METRICS_TOKEN"]],
    [{ GATEHOUSE_BOOTSTRAP_KEY: "short" }, ["GATEHOUSE_BOOTSTRAP_KEY"]],
    [
      { PORT: "abc", GATEHOUSE_BOOTSTRAP_KEY: "short", LOG_LEVEL: "chatty" },
      ["PORT", "GATEHOUSE_BOOTSTRAP_KEY", "LOG_LEVEL"],
    ],
  ])("refuses to start with %j, naming %j", async (env, names) => {
    const dir = tempDataDir();
    const result = await failedStart({ GATEHOUSE_DATA_DIR: dir, ...env });
    expect(result.code).toBe(2);
    for (const name of names) expect(result.stderr).toContain(`${name}: `);
    expect(result.stdout.match(KEY_RE)).toBeNull();
    expect(result.stderr).not.toContain("short"); // the bad secret is not echoed
  });

  it("exits 1 with the cause when the record store cannot be reached", async () => {
    const result = await failedStart({
      GATEHOUSE_DATA_DIR: tempDataDir(),
      DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/gatehouse: failed to start: .*ECONNREFUSED/);
  });
});

describe.skipIf(!PG_URL || !REDIS_URL)("two server processes on PostgreSQL and Redis (scale-out)", () => {
  if (!PG_URL || !REDIS_URL) console.warn(!PG_URL ? PG_SKIP_REASON : REDIS_SKIP_REASON);

  it("start together with one bootstrap key, share records, and stop cleanly", async () => {
    const db = await freshPostgresDatabase();
    try {
      const bootKey = `sk-gh-v1-${"5e".repeat(32)}`;
      const env = {
        DATABASE_URL: db.url,
        REDIS_URL,
        GATEHOUSE_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString("base64"),
        GATEHOUSE_BOOTSTRAP_KEY: bootKey,
        // No ClickHouse server here: each instance keeps its own DuckDB file, by explicit consent.
        GATEHOUSE_ALLOW_SPLIT_ANALYTICS: "true",
      };
      const dataDirs = [tempDataDir(), tempDataDir()];
      const [a, b] = await Promise.all(dataDirs.map((dir) => start({ ...env, GATEHOUSE_DATA_DIR: dir })));
      if (!a || !b) throw new Error("two servers expected");
      try {
        for (const s of [a, b]) {
          expect(s.stdout().match(KEY_RE)).toBeNull();
          // The Redis client may still be connecting right after start: poll briefly.
          let ready = await get(`${s.origin}/readyz`);
          for (let i = 0; i < 20 && ready.status !== 200; i++) {
            await new Promise((r) => setTimeout(r, 100));
            ready = await get(`${s.origin}/readyz`);
          }
          expect(await ready.json()).toMatchObject({
            status: "ready",
            checks: { record_store: "ok", redis: "ok" },
          });
        }
        // A workspace created through one instance is visible through the other.
        const created = await fetch(`${a.base}/workspaces`, {
          method: "POST",
          headers: { authorization: `Bearer ${bootKey}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "Shared", slug: "shared" }),
          signal: AbortSignal.timeout(10_000),
        });
        expect(created.status).toBe(201);
        const seen = await get(`${b.base}/workspaces/shared`, bootKey);
        expect(seen.status).toBe(200);
        for (const s of [a, b]) expect(s.stdout()).toContain('"store":"postgres"');
        // With GATEHOUSE_ENCRYPTION_KEY shared, neither instance wrote a key file of its own.
        for (const dir of dataDirs) expect(() => statSync(join(dir, "encryption.key"))).toThrow();
      } finally {
        const exits = await Promise.all([stop(a), stop(b)]);
        for (const e of exits) expect(e.code).toBe(0);
      }
    } finally {
      await db.drop();
    }
  });
});
