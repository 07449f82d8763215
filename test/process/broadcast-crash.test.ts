import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";

/**
 * Broadcast across a crash: the real server (`node --import tsx src/main.ts`) delivers to a local
 * OTLP receiver that answers slowly, is killed with SIGKILL in the middle of delivery, and is
 * started again on the same data directory. Every generation it accepted arrives at least once.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const children = new Set<ChildProcessWithoutNullStreams>();
const dirs: string[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Server {
  child: ChildProcessWithoutNullStreams;
  base: string;
  exited: Promise<unknown>;
}

async function start(dataDir: string, bootstrapKey: string): Promise<Server> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PORT: "0",
      LOG_LEVEL: "info",
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_BOOTSTRAP_KEY: bootstrapKey,
      RATE_LIMIT_MANAGEMENT_MAX: "1000000",
      BROADCAST_POLL_MS: "20",
      BROADCAST_RETRY_BASE_MS: "10",
      BROADCAST_RETRY_MAX_MS: "100",
      BROADCAST_ATTEMPT_TIMEOUT_MS: "500",
    },
  });
  children.add(child);
  let out = "";
  let err = "";
  child.stderr.on("data", (b: Buffer) => (err += b.toString("utf8")));
  const exited = new Promise((done) => child.on("exit", done));
  const base = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`server did not start:\n${out}\n${err}`)), 30_000);
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString("utf8");
      for (const line of out.split("\n")) {
        if (!line.includes("gatehouse listening")) continue;
        clearTimeout(timer);
        done((JSON.parse(line) as { base: string }).base);
        return;
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      fail(new Error(`server exited:\n${out}\n${err}`));
    });
  });
  return { child, base, exited };
}

describe("Broadcast survives SIGKILL mid-delivery", () => {
  it("every accepted generation arrives at least once after a kill and a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gh-broadcast-crash-"));
    dirs.push(dataDir);
    const key = `sk-gh-v1-${randomBytes(32).toString("hex")}`;
    const rx = new TestReceiver();
    rx.okDelayMs = 100; // slow receiver: the kill lands while batches are in flight
    await rx.start();
    try {
      let s = await start(dataDir, key);
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const created = await fetch(`${s.base}/observability/destinations`, {
        method: "POST",
        headers,
        body: JSON.stringify({ type: "webhook", name: "crash", config: { url: rx.url } }),
      });
      expect(created.status).toBe(201);
      const createdAt = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");
      const ids: string[] = [];
      for (let b = 0; b < 4; b++) {
        const batch = Array.from({ length: 500 }, (_, i) => {
          const id = `crash-bc-${b}-${i}`;
          ids.push(id);
          return {
            id,
            created_at: createdAt,
            api_key_hash: hashKey(key),
            model: "openai/gpt-4o",
            provider: "OpenAI",
            tokens_prompt: 10,
            tokens_completion: 5,
            usage: 0.0001,
            latency_ms: 50,
          };
        });
        const res = await fetch(`${s.base}/activity/generations`, {
          method: "POST",
          headers,
          body: JSON.stringify({ generations: batch }),
        });
        expect(res.status).toBe(200);
      }
      await waitFor(() => rx.delivered.size > 0, 20_000, "delivery to start");
      s.child.kill("SIGKILL");
      await s.exited;
      const before = rx.delivered.size;
      expect(before).toBeLessThan(ids.length); // killed mid-delivery
      s = await start(dataDir, key);
      await waitFor(() => ids.every((id) => rx.delivered.has(id)), 60_000, "every generation delivered");
      expect(ids.filter((id) => !rx.delivered.has(id))).toEqual([]);
      s.child.kill("SIGTERM");
      await s.exited;
    } finally {
      await rx.stop();
    }
  }, 120_000);
});
