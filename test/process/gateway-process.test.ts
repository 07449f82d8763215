import { randomBytes } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { cliStoreTargets } from "../helpers/cli-targets.js";
import { gatehouse } from "../helpers/cli.js";
import {
  http,
  killAll,
  killServer,
  startServer,
  stopServer,
  tempDataDir,
  type ChildServer,
} from "../helpers/child-server.js";
import { startFakeOpenAI, FAKE_OPENAI_KEY } from "../helpers/fake-upstreams/openai.js";
import { writeProvidersFile } from "../helpers/providers-file.js";

/**
 * The gateway as a process (the compiled server, test/helpers/child-server.ts):
 * - `kill -9` with requests in flight, then a restart on the same data: the dead process's holds
 *   count for nothing once expired (on PostgreSQL they are rows that outlive it until then; in
 *   memory they die with it), nothing is charged twice (usage = what the answered requests cost),
 *   and `gatehouse reconcile` finds the ledger and the activity store in agreement;
 * - SIGTERM with kept-alive connections to a file provider's upstream: a prompt, clean exit.
 */
afterAll(killAll);

/**
 * Long enough to outlive a kill, a restart and the first checks (a few seconds; more than 8 s once
 * on a loaded CI machine, and past 15 s with four test files running on two cores), short enough
 * to wait for.
 */
const TTL_MS = 30_000;
const WORDS = Array.from({ length: 150 }, (_, i) => `w${i}`).join(" ");

for (const target of cliStoreTargets("gh-gw-crash-")) {
  describe.skipIf(target.skip)(`kill -9 of the gateway with requests in flight, on ${target.name}`, () => {
    it("after restart and hold expiry: holds released, nothing charged twice, reconcile clean", async () => {
      const inst = await target.setup();
      const bootKey = `sk-gh-v1-${randomBytes(32).toString("hex")}`;
      const env = {
        ...inst.env,
        GATEHOUSE_BOOTSTRAP_KEY: bootKey,
        GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
        GATEHOUSE_RESERVATION_TTL_MS: String(TTL_MS),
        GATEHOUSE_ALLOW_SPLIT_ANALYTICS: "true",
        RATE_LIMIT_MANAGEMENT_MAX: "100000",
      };
      const onPostgres = "DATABASE_URL" in inst.env;
      const openHolds = async (hash: string): Promise<number> => {
        const c = new pg.Client({ connectionString: inst.env.DATABASE_URL });
        await c.connect();
        try {
          const q = await c.query<{ n: string }>(
            "select count(*) as n from gateway_reservations where key_hash = $1 and expires_at_ms > $2",
            [hash, Date.now()],
          );
          return Number(q.rows[0]?.n ?? 0);
        } finally {
          await c.end();
        }
      };
      const chat = async (s: ChildServer, key: string, body: Record<string, unknown>) => {
        const r = await http(`${s.base}/chat/completions`, { method: "POST", key, body });
        return r;
      };
      try {
        let s = await startServer(env);
        const created = await http(`${s.base}/keys`, {
          method: "POST",
          key: bootKey,
          body: { name: "crash", limit: 0.01 },
        });
        expect(created.status).toBe(201);
        const key = created.body.key as string;
        const hash = created.body.data.hash as string;

        // Answered before the crash: charged once each.
        let answered = 0;
        for (const stream of [false, false, true]) {
          const r = await fetch(`${s.base}/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "mock/echo", stream, messages: [{ role: "user", content: "hi" }] }),
          });
          expect(r.status).toBe(200);
          const text = await r.text();
          answered += stream
            ? (
                JSON.parse(
                  text
                    .split("\n\n")
                    .filter((e) => e.includes('"usage"'))
                    .at(-1)!
                    .slice(6),
                ) as { usage: { cost: number } }
              ).usage.cost
            : (JSON.parse(text) as { usage: { cost: number } }).usage.cost;
        }

        // Their records committed, so their holds (each counting its worst case until then) are
        // gone whatever GATEHOUSE_RECORDING_GATHER_MS is: a non-model request waits for them.
        expect((await http(`${s.base}/key`, { key })).status).toBe(200);

        // In flight at the crash: four slow streams, each holding about 0.0022 USD (the model's
        // 1024 completion tokens), each having sent its first chunk (so its hold is taken).
        const inFlight = await Promise.all(
          Array.from({ length: 4 }, async () => {
            const r = await fetch(`${s.base}/chat/completions`, {
              method: "POST",
              headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
              body: JSON.stringify({
                model: "mock/echo",
                stream: true,
                messages: [{ role: "user", content: `${WORDS} [[mock chunks=100 chunk_delay_ms=100]]` }],
              }),
            });
            expect(r.status).toBe(200);
            const reader = r.body!.getReader();
            await reader.read();
            return reader;
          }),
        );
        if (onPostgres) expect(await openHolds(hash)).toBe(4);
        await killServer(s);
        const killedAt = Date.now();
        for (const reader of inFlight) await reader.read().catch(() => undefined);

        s = await startServer(env);
        // A request needing nearly all the rest of the limit (3000 completion tokens ≈ 0.006 USD).
        const big = { model: "mock/echo", messages: [{ role: "user", content: "hi" }], max_tokens: 3000 };
        if (onPostgres) {
          // The dead process's holds outlive it in the shared table and still count until they expire.
          expect(await openHolds(hash)).toBe(4);
          const blocked = await chat(s, key, big);
          expect([402, 403]).toContain(blocked.status);
          expect(blocked.body.error.metadata.reserved).toBeGreaterThan(0.008);
          // Every hold was last renewed before the kill, so it expires within TTL_MS of it.
          while (Date.now() < killedAt + TTL_MS + 5_000 && (await openHolds(hash)) > 0)
            await new Promise((r) => setTimeout(r, 200));
          expect(await openHolds(hash)).toBe(0);
        }
        // Released: the whole rest of the limit is available again.
        const after = await chat(s, key, big);
        expect(after.status).toBe(200);
        answered += after.body.usage.cost as number;

        // Nothing charged twice, nothing charged for the killed streams.
        const me = await http(`${s.base}/key`, { key });
        expect(me.body.data.usage).toBeCloseTo(answered, 12);
        expect(me.body.data.usage_daily).toBeCloseTo(answered, 12);
        expect((await stopServer(s)).code).toBe(0);

        const run = await gatehouse(["reconcile", "--json"], {
          ...inst.env,
          GATEHOUSE_ENCRYPTION_KEY: env.GATEHOUSE_ENCRYPTION_KEY,
        });
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
        const report = JSON.parse(run.stdout) as {
          in_sync: boolean;
          drifts: unknown[];
          records: { ledger: number; activity: number };
        };
        expect(report).toMatchObject({ in_sync: true, drifts: [], records: { ledger: 4, activity: 4 } });
      } finally {
        killAll();
        await inst.cleanup();
      }
    }, 120_000);
  });
}

describe("kill -9 right after answers, durable recording on SQLite (the recording journal)", () => {
  it("the next start charges every answered request exactly once, and reconcile is clean", async () => {
    const dir = tempDataDir();
    const bootKey = `sk-gh-v1-${randomBytes(32).toString("hex")}`;
    const env = {
      GATEHOUSE_DATA_DIR: dir,
      GATEHOUSE_BOOTSTRAP_KEY: bootKey,
      GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      GATEHOUSE_RECORDING: "durable",
      // Commits gather for a whole second: the kill lands before any answer below is committed.
      GATEHOUSE_RECORDING_GATHER_MS: "1000",
      RATE_LIMIT_MANAGEMENT_MAX: "100000",
    };
    try {
      let s = await startServer(env);
      const created = await http(`${s.base}/keys`, {
        method: "POST",
        key: bootKey,
        body: { name: "j", limit: 1 },
      });
      expect(created.status).toBe(201);
      const key = created.body.key as string;
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          http(`${s.base}/chat/completions`, {
            method: "POST",
            key,
            body: { model: "mock/echo", max_tokens: 10, messages: [{ role: "user", content: `hello ${i}` }] },
          }),
        ),
      );
      await killServer(s);
      for (const a of answers) expect(a.status).toBe(200);
      const charged = answers.reduce((sum, a) => sum + (a.body.usage.cost as number), 0);
      expect(
        readdirSync(join(dir, "gatehouse.sqlite.journal")).filter((n) => n.endsWith(".journal")),
      ).toHaveLength(1);

      s = await startServer(env);
      const me = await http(`${s.base}/key`, { key });
      expect(me.body.data.usage).toBeCloseTo(charged, 12);
      for (const a of answers) {
        const g = await http(`${s.base}/generation?id=${a.body.id as string}`, { key });
        expect(g.status).toBe(200);
      }
      expect(
        readdirSync(join(dir, "gatehouse.sqlite.journal")).filter((n) => n.endsWith(".journal")),
      ).toEqual([]);
      expect((await stopServer(s)).code).toBe(0);

      const run = await gatehouse(["reconcile", "--json"], {
        GATEHOUSE_DATA_DIR: dir,
        GATEHOUSE_ENCRYPTION_KEY: env.GATEHOUSE_ENCRYPTION_KEY,
      });
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ in_sync: true, records: { ledger: 6, activity: 6 } });
    } finally {
      killAll();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/** A fake OpenAI-compatible upstream and a providers file routing `local/<model>` to it. */
async function localProvider(model: string) {
  const upstream = await startFakeOpenAI();
  const file = writeProvidersFile(
    [{ slug: "local", kind: "openai-compatible", base_url: `${upstream.url}/v1`, api_key_env: "LOCAL_KEY" }],
    [
      {
        id: `local/${model}`,
        provider: "local",
        upstream_model: model,
        prompt_price: 1e-6,
        completion_price: 2e-6,
      },
    ],
  );
  return { upstream, file };
}

describe("SIGTERM with kept-alive connections to a file provider's upstream", () => {
  it("exits 0 promptly and the upstream sees its connections closed", async () => {
    const { upstream, file } = await localProvider("ok");
    const bootKey = `sk-gh-v1-${randomBytes(32).toString("hex")}`;
    try {
      const s = await startServer({
        GATEHOUSE_BOOTSTRAP_KEY: bootKey,
        GATEHOUSE_PROVIDERS_FILE: file.path,
        LOCAL_KEY: FAKE_OPENAI_KEY,
      });
      const key = (await http(`${s.base}/keys`, { method: "POST", key: bootKey, body: { name: "term" } }))
        .body.key as string;
      for (const stream of [false, true]) {
        const r = await fetch(`${s.base}/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "local/ok", stream, messages: [{ role: "user", content: "Hi" }] }),
        });
        expect(r.status).toBe(200);
        await r.text();
      }
      expect(upstream.openConnections()).toBeGreaterThan(0);
      const t0 = performance.now();
      const exit = await stopServer(s);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(performance.now() - t0).toBeLessThan(5_000);
      for (let i = 0; i < 40 && upstream.openConnections() > 0; i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(upstream.openConnections()).toBe(0);
    } finally {
      await upstream.close();
      file.remove();
    }
  }, 60_000);
});

describe("SIGTERM with a stream in flight that never ends", () => {
  it("waits the grace period, cancels it, records what it generated, and exits 0", async () => {
    const { upstream, file } = await localProvider("never-ends");
    const bootKey = `sk-gh-v1-${randomBytes(32).toString("hex")}`;
    const GRACE_MS = 1_500;
    try {
      const env = {
        GATEHOUSE_BOOTSTRAP_KEY: bootKey,
        GATEHOUSE_PROVIDERS_FILE: file.path,
        GATEHOUSE_SHUTDOWN_GRACE_MS: String(GRACE_MS),
        LOCAL_KEY: FAKE_OPENAI_KEY,
      };
      let s = await startServer(env);
      const created = await http(`${s.base}/keys`, { method: "POST", key: bootKey, body: { name: "term" } });
      const key = created.body.key as string;
      const res = await fetch(`${s.base}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "local/never-ends",
          stream: true,
          messages: [{ role: "user", content: "Hi" }],
        }),
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = await reader.read(); // the first content chunk has arrived
      expect(new TextDecoder().decode(first.value)).toContain('"content"');
      const body = (async () => {
        const decoder = new TextDecoder();
        let text = "";
        try {
          for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value);
        } catch {
          // the connection is closed by the shutdown
        }
        return text;
      })();

      const t0 = performance.now();
      const exit = await stopServer(s);
      const took = performance.now() - t0;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(took).toBeGreaterThanOrEqual(GRACE_MS - 100); // it waited for the request first
      expect(took).toBeLessThan(GRACE_MS + 8_000);
      // The client is told in band that the answer was cut short, not left with a stream that
      // just ends (which the SDK would take for a whole answer).
      const rest = await body;
      expect(rest.endsWith("data: [DONE]\n\n")).toBe(true);
      const events = rest
        .split("\n\n")
        .filter((e) => e.startsWith("data: {"))
        .map((e) => JSON.parse(e.slice(6)) as Record<string, any>);
      const last = events.at(-1)!;
      expect(last.choices[0].finish_reason).toBe("error");
      expect(last.error).toMatchObject({ code: 503, metadata: { error_type: "server" } });
      expect(last.error.message).toMatch(/shutting down/);
      expect(last.usage.cost).toBeGreaterThan(0);
      expect(s.stdout()).toContain("model requests cancelled at shutdown");

      // The cancelled stream was charged and recorded: the key's usage grew, and stays after a restart.
      s = await startServer({ ...env, GATEHOUSE_DATA_DIR: s.dataDir });
      const usage = await http(`${s.base}/key`, { key });
      expect(usage.body.data.usage).toBeGreaterThan(0);
      await stopServer(s);
    } finally {
      await upstream.close();
      file.remove();
    }
  }, 60_000);
});
