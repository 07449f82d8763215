import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_SKIP_REASON, PG_URL, freshPostgresDatabase } from "../helpers/stores.js";
import { http, killAll, startServer, type ChildServer } from "../helpers/child-server.js";

/**
 * Two gateway instances on one PostgreSQL enforce one limit together: their holds share the
 * gateway_reservations table (locked per workspace). Then `kill -9` of an instance with streams in
 * flight: its holds keep counting until they expire (GATEHOUSE_RESERVATION_TTL_MS), then count for
 * nothing; nothing is charged twice (usage = the recorded generations' cost).
 */
const SKIP = !PG_URL;
if (SKIP) console.warn(PG_SKIP_REASON);

const TTL_MS = 2_000;
const WORDS = Array.from({ length: 150 }, (_, i) => `w${i}`).join(" ");
const MAX_TOKENS = 100;

async function holdsIn(url: string, keyHash?: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const q = keyHash
      ? await c.query<{ n: string }>("select count(*) as n from gateway_reservations where key_hash = $1", [
          keyHash,
        ])
      : await c.query<{ n: string }>("select count(*) as n from gateway_reservations");
    return Number(q.rows[0]?.n ?? 0);
  } finally {
    await c.end();
  }
}

async function ledgerOfGenerations(url: string, keyHash: string): Promise<bigint> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const rows = (
      await c.query<{ detail: string }>("select detail from gateway_generations where key_hash = $1", [
        keyHash,
      ])
    ).rows;
    return rows.reduce((s, r) => s + BigInt((JSON.parse(r.detail) as { usage_nano: string }).usage_nano), 0n);
  } finally {
    await c.end();
  }
}

describe.skipIf(SKIP)("gateway on PostgreSQL: two instances, one limit; kill -9", () => {
  const bootKey = `sk-gh-v1-${randomBytes(32).toString("hex")}`;
  let db: { url: string; drop: () => Promise<void> };
  let a: ChildServer;
  let b: ChildServer;

  beforeAll(async () => {
    db = await freshPostgresDatabase();
    const env = {
      DATABASE_URL: db.url,
      GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      GATEHOUSE_BOOTSTRAP_KEY: bootKey,
      RATE_LIMIT_MANAGEMENT_MAX: "100000",
      GATEHOUSE_MOCK_LATENCY_MS: "5",
      GATEHOUSE_RESERVATION_TTL_MS: String(TTL_MS),
      // Up to 100 of one key's requests in flight on each instance at once: what is tested here is
      // the shared reservations, not the per-key fair-use limit (test/gateway/fair-inflight.test.ts).
      GATEHOUSE_MAX_IN_FLIGHT_PER_KEY: "0",
      LOG_LEVEL: "info",
      // No ClickHouse server here: each instance keeps its own DuckDB file, by explicit consent.
      GATEHOUSE_ALLOW_SPLIT_ANALYTICS: "true",
    };
    a = await startServer(env);
    b = await startServer(env);
  }, 60_000);

  afterAll(async () => {
    killAll();
    await db?.drop();
  });

  /** A chat request with a generous deadline (200 at once queue on a shared 2-core machine). */
  const chat = async (base: string, key: string, body: Record<string, unknown>) => {
    const res = await fetch(`${base}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(90_000),
    });
    return { status: res.status, body: await res.json() };
  };

  it("200 concurrent requests split over both instances: settled spend never exceeds the limit", async () => {
    const probeKey = (await http(`${a.base}/keys`, { method: "POST", key: bootKey, body: { name: "probe" } }))
      .body.key as string;
    const msg = [{ role: "user", content: WORDS }];
    const probe = await chat(a.base, probeKey, { model: "mock/echo", messages: msg, max_tokens: MAX_TOKENS });
    expect(probe.status).toBe(200);
    const worst = (probe.body.usage.prompt_tokens * 1 + MAX_TOKENS * 2) / 1e6;
    const limit = Number((worst * 50).toFixed(6));
    const created = await http(`${a.base}/keys`, {
      method: "POST",
      key: bootKey,
      body: { name: "shared", limit },
    });
    const key = created.body.key as string;
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        chat(i % 2 === 0 ? a.base : b.base, key, {
          model: "mock/echo",
          messages: msg,
          max_tokens: MAX_TOKENS,
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const odd = results.filter((r) => ![200, 402, 403].includes(r.status));
    expect(odd.map((r) => `${r.status} ${JSON.stringify(r.body)}`).slice(0, 3)).toEqual([]);
    expect(ok.length + results.filter((r) => r.status === 402 || r.status === 403).length).toBe(200);
    expect(ok.length).toBeGreaterThan(10);
    const usage = (await http(`${b.base}/key`, { key })).body.data.usage as number;
    expect(usage).toBeLessThanOrEqual(limit);
    const answered = ok.reduce((s, r) => s + (r.body.usage.cost as number), 0);
    expect(usage).toBeCloseTo(answered, 9);
    expect(await holdsIn(db.url, created.body.data.hash as string)).toBe(0);
  }, 180_000);

  it("kill -9 with streams in flight: holds count until they expire, then not; nothing charged twice", async () => {
    const created = await http(`${a.base}/keys`, {
      method: "POST",
      key: bootKey,
      body: { name: "crash", limit: 0.01 },
    });
    const key = created.body.key as string;
    const hash = created.body.data.hash as string;
    // Slow streams on A, each holding ~0.002 USD (no max_tokens: the model's 1024 completion tokens).
    const slow = Array.from({ length: 4 }, () =>
      fetch(`${a.base}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "mock/echo",
          stream: true,
          messages: [{ role: "user", content: `${WORDS} [[mock chunks=100 chunk_delay_ms=100]]` }],
        }),
      })
        .then((r) => r.text())
        .catch(() => "killed"),
    );
    for (let i = 0; i < 50 && (await holdsIn(db.url, hash)) < 4; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await holdsIn(db.url, hash)).toBe(4);
    a.child.kill("SIGKILL");
    await a.exited;
    await Promise.all(slow);
    // The dead instance's holds still count: a request that needs all the rest is refused on B.
    const blocked = await chat(b.base, key, {
      model: "mock/echo",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 3000,
    });
    expect([402, 403]).toContain(blocked.status);
    expect(blocked.body.error.metadata.reserved).toBeGreaterThan(0);
    // After the expiry they count for nothing.
    await new Promise((r) => setTimeout(r, TTL_MS + 300));
    const after = await chat(b.base, key, {
      model: "mock/echo",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 3000,
    });
    expect(after.status).toBe(200);
    // Nothing charged twice: the key's usage is exactly what the recorded generations cost.
    const usage = (await http(`${b.base}/key`, { key })).body.data.usage as number;
    expect(usage).toBeCloseTo(Number(await ledgerOfGenerations(db.url, hash)) / 1e9, 12);
    expect(usage).toBeCloseTo(after.body.usage.cost as number, 12);
  }, 120_000);
});
