import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { within } from "../helpers/within.js";
import { openConfig } from "../../src/domain/destinations/destination-record.js";
import { hashKey, newKeyString } from "../../src/lib/ids.js";
import { POLICY_PROPAGATION_BOUND_MS } from "../../src/domain/policy/policy.js";
import { SecretBox } from "../../src/lib/secret-box.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import {
  PG_SKIP_REASON,
  PG_URL,
  REDIS_SKIP_REASON,
  REDIS_URL,
  freshPostgresDatabase,
} from "../helpers/stores.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import {
  http,
  killAll,
  readyWithin,
  startServer,
  stopServer,
  type ChildServer,
} from "../helpers/child-server.js";

/**
 * Scale-out: several stateless instances behind a load balancer share one PostgreSQL database
 * (records), one Redis (rate-limit counters) and one GATEHOUSE_ENCRYPTION_KEY (destination
 * secrets). Other suites use the same Redis at the same time, so nothing here flushes it: every
 * key string is random, and only the counters of those keys are removed at the end.
 */
const SKIP = !PG_URL || !REDIS_URL;
if (SKIP) console.warn(!PG_URL ? PG_SKIP_REASON : REDIS_SKIP_REASON);

const KEY_RE = /sk-gh-v1-[0-9a-f]{64}/g;
const RL_NAMESPACE = "gatehouse:rl:";

/** Deletes the rate-limit counters of the given keys (never anything else in the shared Redis). */
async function dropCounters(keys: string[]): Promise<void> {
  if (!REDIS_URL || keys.length === 0) return;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    for (const key of keys) {
      let cursor = "0";
      do {
        const [next, found] = await redis.scan(
          cursor,
          "MATCH",
          `${RL_NAMESPACE}*${hashKey(key)}`,
          "COUNT",
          1000,
        );
        cursor = next;
        if (found.length > 0) await redis.del(...found);
      } while (cursor !== "0");
    }
  } finally {
    redis.disconnect();
  }
}

async function countRows(url: string, table: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ n: string }>(`select count(*) as n from ${table}`);
    return Number(r.rows[0]!.n);
  } finally {
    await c.end();
  }
}

const ORDER = ["daily", "weekly", "monthly", "lifetime"] as const;
/** Every pair of the budgets present strictly decreases as the interval narrows. */
function expectOrdered(budgets: { reset_interval: string | null; limit_usd: number }[]) {
  const rank = (b: { reset_interval: string | null }) =>
    ORDER.indexOf((b.reset_interval ?? "lifetime") as (typeof ORDER)[number]);
  const byRank = [...budgets].sort((x, y) => rank(x) - rank(y));
  expect(new Set(byRank.map(rank)).size).toBe(byRank.length);
  for (let i = 1; i < byRank.length; i++)
    expect(byRank[i]!.limit_usd).toBeGreaterThan(byRank[i - 1]!.limit_usd);
}

describe.skipIf(SKIP)("two server processes (src/main.ts) on one PostgreSQL database and one Redis", () => {
  const bootKey = newKeyString();
  const encryptionKey = randomBytes(32).toString("base64");
  const usedKeys: string[] = [bootKey];
  let db: { url: string; drop: () => Promise<void> };
  let a: ChildServer;
  let b: ChildServer;

  beforeAll(async () => {
    db = await freshPostgresDatabase();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL,
      GATEHOUSE_ENCRYPTION_KEY: encryptionKey,
      GATEHOUSE_BOOTSTRAP_KEY: bootKey,
      RATE_LIMIT_MANAGEMENT_MAX: "5",
      // No ClickHouse server here: each instance keeps its own DuckDB file, by explicit consent.
      GATEHOUSE_ALLOW_SPLIT_ANALYTICS: "true",
    };
    // Both start at once on the empty database: migrations and bootstrap race.
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled([a && stopServer(a), b && stopServer(b)]);
    killAll();
    await db?.drop();
    await dropCounters(usedKeys);
  }, 30_000);

  it("both start on the empty database: one organization, the bootstrap key works on both, nothing printed", async () => {
    expect(await countRows(db.url, "organizations")).toBe(1);
    expect(await countRows(db.url, "api_keys")).toBe(1);
    for (const s of [a, b]) {
      expect(s.stdout().match(KEY_RE)).toBeNull();
      expect(s.stdout()).not.toContain("first start");
      expect(s.stdout() + s.stderr()).not.toContain(bootKey);
      expect(s.stdout()).toContain('"store":"postgres"');
      expect(s.stdout()).toContain('"redis":true');
      // The Redis client connects in the background: ready within moments of listening.
      const ready = await readyWithin(s.origin, 5_000);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: "ready", checks: { record_store: "ok", redis: "ok" } });
      const ws = await http(`${s.base}/workspaces`, { key: bootKey });
      expect(ws.status).toBe(200);
      expect(ws.body.data.map((w: { slug: string }) => w.slug)).toEqual(["default"]);
    }
  });

  it("an API key created on A is read, patched and deleted on B; A sees each change", async () => {
    const created = await http(`${a.base}/keys`, {
      method: "POST",
      key: bootKey,
      body: { name: "scale key", limit: 25 },
    });
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    usedKeys.push(key);
    const hash = created.body.data.hash as string;

    const onB = await http(`${b.base}/keys/${hash}`, { key: bootKey });
    expect(onB.status).toBe(200);
    expect(onB.body.data).toEqual(created.body.data);

    const patched = await http(`${b.base}/keys/${hash}`, {
      method: "PATCH",
      key: bootKey,
      body: { name: "renamed on B", limit: 30 },
    });
    expect(patched.status).toBe(200);
    const backOnA = await http(`${a.base}/keys/${hash}`, { key: bootKey });
    expect(backOnA.body.data).toMatchObject({ name: "renamed on B", limit: 30 });

    for (const s of [a, b]) {
      const self = await http(`${s.base}/key`, { key });
      expect(self.status).toBe(200);
      expect(self.body.data).toMatchObject({ label: created.body.data.label, is_management_key: false });
    }

    // Deleted through B: refused by B from the next request on, and by A within the policy
    // cache's bound (A hears of it by notification; an assertion of "at once" on A failed when
    // the notification came after A's next request, as docs/scaling.md allows).
    expect((await http(`${b.base}/keys/${hash}`, { method: "DELETE", key: bootKey })).status).toBe(200);
    expect((await http(`${b.base}/key`, { key })).status).toBe(401);
    const onA = await within(5_000, async () => (await http(`${a.base}/key`, { key })).status === 401);
    expect(onA).toBeLessThan(POLICY_PROPAGATION_BOUND_MS);
  });

  it("a workspace and its budget created on A are read on B", async () => {
    const ws = await http(`${a.base}/workspaces`, {
      method: "POST",
      key: bootKey,
      body: { name: "Scale team", slug: "scale-team" },
    });
    expect(ws.status).toBe(201);
    const put = await http(`${a.base}/workspaces/scale-team/budgets/monthly`, {
      method: "PUT",
      key: bootKey,
      body: { limit_usd: 100 },
    });
    expect(put.status).toBe(200);

    const wsOnB = await http(`${b.base}/workspaces/${ws.body.data.id}`, { key: bootKey });
    expect(wsOnB.status).toBe(200);
    expect(wsOnB.body.data).toEqual(ws.body.data);
    const budgetOnB = await http(`${b.base}/workspaces/scale-team/budgets/monthly`, { key: bootKey });
    expect(budgetOnB.status).toBe(200);
    expect(budgetOnB.body.data).toMatchObject({ reset_interval: "monthly", limit_usd: 100 });
  });

  it("a destination with secrets created on A reads the same masked config on B; PATCH on B with the masked value keeps the secret", async () => {
    const config = {
      publicKey: "pk-lf-scale-0123456789abEfGh",
      secretKey: "sk-lf-scale-0123456789abAbCd",
      baseUrl: "https://user:pa55word-scale@langfuse.example.com",
      headers: { "X-Api-Token": "hdr-secret-scale-0123456789" },
    };
    const created = await http(`${a.base}/observability/destinations`, {
      method: "POST",
      key: bootKey,
      body: { name: "traces", type: "langfuse", config },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const masked = created.body.data.config as Record<string, unknown>;
    for (const secret of [
      "pk-lf-scale-0123456789abEfGh",
      "sk-lf-scale-0123456789abAbCd",
      "pa55word-scale",
      "hdr-secret-scale-0123456789",
    ]) {
      expect(created.text).not.toContain(secret);
    }

    // B decrypts A's ciphertext: the instances share GATEHOUSE_ENCRYPTION_KEY.
    const onB = await http(`${b.base}/observability/destinations/${id}`, { key: bootKey });
    expect(onB.status).toBe(200);
    expect(onB.body.data.config).toEqual(masked);

    // Echo the masked config back through B while renaming: the stored secrets stay as they were.
    const patched = await http(`${b.base}/observability/destinations/${id}`, {
      method: "PATCH",
      key: bootKey,
      body: { name: "traces (renamed)", config: masked },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.name).toBe("traces (renamed)");
    expect(patched.body.data.config).toEqual(masked);
    const onA = await http(`${a.base}/observability/destinations/${id}`, { key: bootKey });
    expect(onA.body.data.config).toEqual(masked);

    // At rest: the ciphertext opens with the shared key to exactly the original secrets.
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const row = await c.query<{ id: string; config_ciphertext: string }>(
        "select id, config_ciphertext from destinations where id = $1",
        [id],
      );
      expect(row.rows[0]!.config_ciphertext).not.toContain("sk-lf-scale");
      const stored = openConfig(new SecretBox(Buffer.from(encryptionKey, "base64")), row.rows[0]!);
      expect(stored).toMatchObject(config);
    } finally {
      await c.end();
    }
  });

  it("the rate limit is shared: 3 requests on A and 3 on B, the 6th is 429 with Retry-After", async () => {
    const created = await http(`${a.base}/keys`, { method: "POST", key: bootKey, body: { name: "limited" } });
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    usedKeys.push(key);
    const order = [a, a, a, b, b];
    for (const s of order) expect((await http(`${s.base}/key`, { key })).status).toBe(200);
    const sixth = await http(`${b.base}/key`, { key });
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(Number(sixth.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(sixth.body).toEqual({
      error: { code: 429, message: expect.stringContaining("Rate limit exceeded"), metadata: null },
    });
    // A sees the same exhausted counter.
    expect((await http(`${a.base}/key`, { key })).status).toBe(429);
  });

  it("concurrent budget PUTs on A and B that together break the ordering: exactly one succeeds", async () => {
    // scale-team has monthly 100. Alone, daily 60 and weekly 40 are both valid; together daily >= weekly.
    const [onA, onB] = await Promise.all([
      http(`${a.base}/workspaces/scale-team/budgets/daily`, {
        method: "PUT",
        key: bootKey,
        body: { limit_usd: 60 },
      }),
      http(`${b.base}/workspaces/scale-team/budgets/weekly`, {
        method: "PUT",
        key: bootKey,
        body: { limit_usd: 40 },
      }),
    ]);
    expect([onA.status, onB.status].sort()).toEqual([200, 400]);
    const loser = onA.status === 400 ? onA : onB;
    expect(loser.body.error.message).toMatch(/^limit_usd: the (daily|weekly) budget must be/);
    const list = await http(`${b.base}/workspaces/scale-team/budgets`, { key: bootKey });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(2);
    expectOrdered(list.body.data);
  });

  it("the instances stop cleanly on SIGTERM", async () => {
    const exits = await Promise.all([stopServer(a), stopServer(b)]);
    for (const e of exits) expect(e).toMatchObject({ code: 0, signal: null });
  });
});

describe.skipIf(SKIP)(
  "two app instances in one process (separate pools and Redis clients): budget race rounds",
  () => {
    const stores: RecordStore[] = [];
    const redises: Redis[] = [];
    const apps: TestApp[] = [];
    let db: { url: string; drop: () => Promise<void> };
    let key = "";

    beforeAll(async () => {
      db = await freshPostgresDatabase();
      // Each "instance" has its own pool and Redis client, as separate processes would; both use
      // the test encryption key. The first one's organization is the one used.
      for (let i = 0; i < 2; i++) {
        const store = await openPostgresStore(db.url, 4);
        const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2, enableOfflineQueue: false });
        await new Promise<void>((ok, fail) => {
          redis.once("ready", ok);
          redis.once("error", fail);
        });
        stores.push(store);
        redises.push(redis);
        apps.push(await makeTestApp({ store, redis }));
      }
      key = apps[0]!.key;
    }, 60_000);

    afterAll(async () => {
      for (const app of apps) await app.close();
      for (const s of stores) await s.close();
      for (const r of redises) r.disconnect();
      await db?.drop();
      await dropCounters(apps.map((a) => a.key));
    }, 30_000);

    const call = (i: number, method: "GET" | "PUT" | "POST", url: string, payload?: unknown) =>
      apps[i]!.call({
        method,
        url: `/api/v1${url}`,
        auth: key,
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });

    // Pairs that are each valid alone (or against the budget set first) but not together.
    const ROUNDS: { first?: [string, number]; x: [string, number]; y: [string, number] }[] = [
      { x: ["daily", 60], y: ["weekly", 40] },
      { x: ["weekly", 100], y: ["monthly", 100] },
      { x: ["monthly", 10], y: ["lifetime", 5] },
      { first: ["monthly", 100], x: ["daily", 60], y: ["weekly", 40] },
      { first: ["daily", 10], x: ["monthly", 50], y: ["weekly", 60] },
      { x: ["daily", 5], y: ["lifetime", 5] },
    ];

    const CASES = ROUNDS.flatMap((r, i) =>
      [2 * i, 2 * i + 1].map((n) => ({
        ...r,
        n,
        label:
          `round ${n}: PUT ${r.x.join(" ")} and ${r.y.join(" ")}` +
          `${r.first ? ` (after ${r.first.join(" ")})` : ""} at once: exactly one succeeds`,
      })),
    );

    it.each(CASES)("$label", async ({ first, x, y, n }) => {
      const slug = `race-${n}`;
      expect((await call(0, "POST", "/workspaces", { name: slug, slug })).statusCode).toBe(201);
      if (first) {
        expect(
          (await call(1, "PUT", `/workspaces/${slug}/budgets/${first[0]}`, { limit_usd: first[1] }))
            .statusCode,
        ).toBe(200);
      }
      // Alternate which instance gets which request.
      const [i, j] = n % 2 === 0 ? [0, 1] : [1, 0];
      const results = await Promise.all([
        call(i, "PUT", `/workspaces/${slug}/budgets/${x[0]}`, { limit_usd: x[1] }),
        call(j, "PUT", `/workspaces/${slug}/budgets/${y[0]}`, { limit_usd: y[1] }),
      ]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400]);
      const list = await call(j, "GET", `/workspaces/${slug}/budgets`);
      const data = list.json().data as { reset_interval: string | null; limit_usd: number }[];
      expect(data).toHaveLength(first ? 2 : 1);
      expectOrdered(data);
    });
  },
);
