import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { newKeyString } from "../../src/lib/ids.js";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  http,
  killAll,
  readyWithin,
  startServer,
  stopServer,
  type ChildServer,
} from "../helpers/child-server.js";

/**
 * Redis holds only rate-limit counters, so its trouble must not take the API down: requests are
 * served without a limit (fail open) and /readyz says what is wrong. These run the real server
 * (src/main.ts) on embedded SQLite; the outage suite runs a private redis-server so that it can
 * stop, kill and restart it without touching the Redis other suites share.
 */
const REDIS_SERVER = spawnSync("redis-server", ["--version"]).status === 0 ? "redis-server" : null;
const NO_REDIS_SERVER =
  "Redis outage suite skipped: no redis-server binary on PATH (apt-get install redis-server)";
if (!REDIS_SERVER) console.warn(NO_REDIS_SERVER);

const bootKey = newKeyString;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const result = await fn();
  return [result, Date.now() - started];
}

const NOT_READY = {
  error: {
    code: 503,
    message: "Not ready",
    metadata: { checks: { record_store: "ok", redis: "unreachable" } },
  },
};

describe("an instance pointed at a Redis port where nothing listens", () => {
  const key = bootKey();
  let s: ChildServer;

  beforeAll(async () => {
    s = await startServer({
      REDIS_URL: "redis://127.0.0.1:1",
      GATEHOUSE_BOOTSTRAP_KEY: key,
      RATE_LIMIT_MANAGEMENT_MAX: "2",
    });
  }, 60_000);

  afterAll(async () => {
    if (s) await stopServer(s).catch(() => undefined);
    killAll();
  }, 30_000);

  it("starts anyway; /readyz is 503 naming redis, /healthz stays 200", async () => {
    const ready = await http(`${s.origin}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject(NOT_READY);
    expect((await http(`${s.origin}/healthz`)).status).toBe(200);
  });

  it("serves the API without limits (fail open): more requests than the limit all succeed at once", async () => {
    for (let i = 0; i < 5; i++) {
      const [res, ms] = await timed(() => http(`${s.base}/workspaces`, { key }));
      expect(res.status).toBe(200);
      expect(ms).toBeLessThan(2_000);
    }
    const created = await http(`${s.base}/workspaces`, {
      method: "POST",
      key,
      body: { name: "Still works", slug: "still-works" },
    });
    expect(created.status).toBe(201);
    expect(s.child.exitCode).toBeNull();
  });
});

/** A free TCP port on 127.0.0.1 (free when asked; redis-server binds it right after). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", ok));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((ok) => srv.close(() => ok()));
  return port;
}

/** A private, non-persistent redis-server; resolves once it accepts connections. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(REDIS_SERVER!, [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
  ]);
  let out = "";
  child.stdout?.on("data", (b: Buffer) => (out += b.toString("utf8")));
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`redis-server did not start:\n${out}`)), 10_000);
    const look = () => {
      if (!out.includes("Ready to accept connections")) return;
      clearTimeout(timer);
      ok();
    };
    child.stdout?.on("data", look);
    child.on("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`redis-server exited with ${code}:\n${out}`));
    });
  });
  child.removeAllListeners("exit");
  return child;
}

async function killRedis(r: ChildProcess | undefined): Promise<void> {
  if (!r || r.exitCode !== null || r.signalCode !== null) return;
  const exited = new Promise((ok) => r.once("exit", ok));
  r.kill("SIGCONT");
  r.kill("SIGKILL");
  await exited;
}

describe.skipIf(!REDIS_SERVER)("Redis outages under a running instance", () => {
  const key = bootKey();
  let port = 0;
  let redis: ChildProcess | undefined;
  let s: ChildServer;

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    s = await startServer({
      REDIS_URL: `redis://127.0.0.1:${port}`,
      GATEHOUSE_BOOTSTRAP_KEY: key,
      RATE_LIMIT_MANAGEMENT_MAX: "3",
    });
  }, 60_000);

  afterAll(async () => {
    await killRedis(redis);
    if (s) await stopServer(s).catch(() => undefined);
    killAll();
  }, 30_000);

  it("with Redis up, /readyz is 200 and the limit applies", async () => {
    // The Redis client connects in the background: ready within moments of listening.
    const ready = await readyWithin(s.origin, 5_000);
    expect(ready.body).toMatchObject({ status: "ready", checks: { record_store: "ok", redis: "ok" } });
    for (let i = 0; i < 3; i++) expect((await http(`${s.base}/workspaces`, { key })).status).toBe(200);
    expect((await http(`${s.base}/workspaces`, { key })).status).toBe(429);
  });

  it("Redis stops answering (SIGSTOP): requests are served within the Redis deadline, /readyz is 503", async () => {
    redis!.kill("SIGSTOP");
    for (let i = 0; i < 5; i++) {
      const [res, ms] = await timed(() => http(`${s.base}/keys`, { key }));
      expect(res.status).toBe(200);
      expect(ms).toBeLessThan(2_500);
    }
    const [ready, ms] = await timed(() => http(`${s.origin}/readyz`));
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject(NOT_READY);
    expect(ms).toBeLessThan(2_500);
    expect((await http(`${s.origin}/healthz`)).status).toBe(200);
  });

  it("Redis dies (connection refused): requests are served at once, /readyz stays 503", async () => {
    await killRedis(redis);
    for (let i = 0; i < 5; i++) {
      const [res, ms] = await timed(() => http(`${s.base}/keys`, { key }));
      expect(res.status).toBe(200);
      expect(ms).toBeLessThan(2_500);
    }
    expect((await http(`${s.origin}/readyz`)).body).toMatchObject(NOT_READY);
  });

  it("Redis comes back: the instance reconnects by itself, /readyz is 200 and limits apply again", async () => {
    redis = await startRedis(port);
    expect((await readyWithin(s.origin, 15_000)).status).toBe(200);
    // The restarted Redis is empty: a fresh window on a route not used before.
    const url = `${s.base}/workspaces/default`;
    for (let i = 0; i < 3; i++) expect((await http(url, { key })).status).toBe(200);
    const over = await http(url, { key });
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toMatch(/^\d+$/);
  });
});
