import { newKeyString } from "../../src/lib/ids.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POLICY_PROPAGATION_BOUND_MS } from "../../src/domain/policy/policy.js";
import { POLICY_LISTENER_NAME } from "../../src/stores/postgres/pg-policy-channel.js";
import { PG_SKIP_REASON, PG_URL, freshPostgresDatabase } from "../helpers/stores.js";
import { http, killAll, startServer, stopServer, type ChildServer } from "../helpers/child-server.js";
import { within } from "../helpers/within.js";

/**
 * The policy cache across instances: two server processes on one PostgreSQL database. A change
 * made through A is obeyed by A at once and by B within POLICY_PROPAGATION_BOUND_MS, also after
 * B's notification connection was cut (B drops its cache and reconnects).
 */
const SKIP = !PG_URL;
if (SKIP) console.warn(PG_SKIP_REASON);

describe.skipIf(SKIP)("policy changes across two instances on one PostgreSQL database", () => {
  const bootKey = newKeyString();
  let db: { url: string; drop: () => Promise<void> };
  let a: ChildServer;
  let b: ChildServer;

  beforeAll(async () => {
    db = await freshPostgresDatabase();
    const env = {
      DATABASE_URL: db.url,
      GATEHOUSE_BOOTSTRAP_KEY: bootKey,
      GATEHOUSE_ALLOW_SPLIT_ANALYTICS: "true",
      RATE_LIMIT_MANAGEMENT_MAX: "100000",
      RATE_LIMIT_KEY_UPDATE_MAX: "100000",
    };
    a = await startServer(env);
    b = await startServer(env);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled([a && stopServer(a), b && stopServer(b)]);
    killAll();
    await db?.drop();
  }, 30_000);

  const createKey = async () => {
    const res = await http(`${a.base}/keys`, { method: "POST", key: bootKey, body: { name: "k" } });
    expect(res.status).toBe(201);
    return res.body as { key: string; data: { hash: string } };
  };

  it("a PATCH disable on A is obeyed by A at once and by B within the bound", async () => {
    const k = await createKey();
    // B learns the key (and caches it).
    for (let i = 0; i < 3; i++) expect((await http(`${b.base}/key`, { key: k.key })).status).toBe(200);
    const patched = await http(`${a.base}/keys/${k.data.hash}`, {
      method: "PATCH",
      key: bootKey,
      body: { disabled: true },
    });
    expect(patched.status).toBe(200);
    const t0 = performance.now();
    expect((await http(`${a.base}/key`, { key: k.key })).status).toBe(401);
    const onB = await within(5_000, async () => (await http(`${b.base}/key`, { key: k.key })).status === 401);
    expect(onB).toBeLessThan(POLICY_PROPAGATION_BOUND_MS);
    expect(performance.now() - t0).toBeLessThan(POLICY_PROPAGATION_BOUND_MS + 200);
    // And back.
    await http(`${a.base}/keys/${k.data.hash}`, { method: "PATCH", key: bootKey, body: { disabled: false } });
    expect(
      await within(5_000, async () => (await http(`${b.base}/key`, { key: k.key })).status === 200),
    ).toBeLessThan(POLICY_PROPAGATION_BOUND_MS);
  });

  it("a budget set on A and a key deleted on A are seen by B within the bound", async () => {
    const put = await http(`${a.base}/workspaces/default/budgets/monthly`, {
      method: "PUT",
      key: bootKey,
      body: { limit_usd: 10 },
    });
    expect(put.status).toBe(200);
    expect(
      (await http(`${b.base}/workspaces/default/budgets/monthly`, { key: bootKey })).body.data.limit_usd,
    ).toBe(10);
    await http(`${a.base}/workspaces/default/budgets/monthly`, {
      method: "PUT",
      key: bootKey,
      body: { limit_usd: 20 },
    });
    expect(
      await within(5_000, async () => {
        const r = await http(`${b.base}/workspaces/default/budgets/monthly`, { key: bootKey });
        return r.body?.data?.limit_usd === 20;
      }),
    ).toBeLessThan(POLICY_PROPAGATION_BOUND_MS);

    const k = await createKey();
    expect((await http(`${b.base}/key`, { key: k.key })).status).toBe(200);
    expect((await http(`${a.base}/keys/${k.data.hash}`, { method: "DELETE", key: bootKey })).status).toBe(
      200,
    );
    expect(
      await within(5_000, async () => (await http(`${b.base}/key`, { key: k.key })).status === 401),
    ).toBeLessThan(POLICY_PROPAGATION_BOUND_MS);
  });

  it("the gateway on B obeys a key disabled and a budget lowered on A within the bound", async () => {
    const k = await createKey();
    const chat = async (server: ChildServer) =>
      (
        await http(`${server.base}/chat/completions`, {
          method: "POST",
          key: k.key,
          body: { model: "mock/echo", messages: [{ role: "user", content: "hi" }], max_tokens: 16 },
        })
      ).status;
    // B serves the key (and caches it and its workspace).
    expect(await chat(b)).toBe(200);
    expect(await chat(b)).toBe(200);
    await http(`${a.base}/keys/${k.data.hash}`, { method: "PATCH", key: bootKey, body: { disabled: true } });
    expect(await chat(a)).toBe(403);
    expect(await within(5_000, async () => (await chat(b)) === 403)).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );
    await http(`${a.base}/keys/${k.data.hash}`, { method: "PATCH", key: bootKey, body: { disabled: false } });
    expect(await within(5_000, async () => (await chat(b)) === 200)).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );

    // A daily budget far below one request's worst case: B refuses it within the bound.
    const put = await http(`${a.base}/workspaces/default/budgets/daily`, {
      method: "PUT",
      key: bootKey,
      body: { limit_usd: 0.000000001 },
    });
    expect(put.status).toBe(200);
    expect(await within(5_000, async () => (await chat(b)) === 403)).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );
    await http(`${a.base}/workspaces/default/budgets/daily`, { method: "DELETE", key: bootKey });
  });

  it("the gateway on B obeys a key limit lowered on A within the bound (402, then 403), and raised again", async () => {
    const res = await http(`${a.base}/keys`, {
      method: "POST",
      key: bootKey,
      body: { name: "k", limit: 10 },
    });
    expect(res.status).toBe(201);
    const k = res.body as { key: string; data: { hash: string } };
    type Refusal = { error: { code: number; message: string; metadata: Record<string, unknown> } };
    const chat = (server: ChildServer) =>
      http(`${server.base}/chat/completions`, {
        method: "POST",
        key: k.key,
        body: { model: "mock/echo", messages: [{ role: "user", content: "hi" }], max_tokens: 16 },
      });
    const setLimit = async (limit: number) => {
      const r = await http(`${a.base}/keys/${k.data.hash}`, {
        method: "PATCH",
        key: bootKey,
        body: { limit },
      });
      expect(r.status).toBe(200);
    };
    /** A refusal on the key's own limit naming `limit` (the new one, not a cached one). */
    const refusedAt = (r: Awaited<ReturnType<typeof chat>>, statuses: number[], limit: number) => {
      if (!statuses.includes(r.status)) return false;
      const m = (r.body as Refusal).error.metadata;
      return m.scope === "key" && Math.abs((m.limit as number) - limit) < 1e-12;
    };
    const usage = async () => (await http(`${a.base}/key`, { key: k.key })).body.data.usage as number;
    // B serves the key (and caches it with its limit of 10).
    expect((await chat(b)).status).toBe(200);
    expect((await chat(b)).status).toBe(200);
    const spent = await usage();
    expect(spent).toBeGreaterThan(0);

    // Lowered to just above what is spent, below one request's worst case: 402 naming the new
    // limit, at once on A, within the bound on B (403 there if B served a request meanwhile with
    // the old limit, which the bound allows: then the key's limit is spent).
    const tight = spent + 0.00001;
    await setLimit(tight);
    const onA = await chat(a);
    expect(refusedAt(onA, [402], tight), onA.text).toBe(true);
    expect((onA.body as Refusal).error.message).toMatch(/requested up to 16 tokens, can only afford \d+/);
    expect(await within(5_000, async () => refusedAt(await chat(b), [402, 403], tight))).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );

    // Lowered below what is spent: "Key limit exceeded" (403), at once on A, within the bound on B.
    const half = (await usage()) / 2;
    await setLimit(half);
    const exceeded = await chat(a);
    expect(refusedAt(exceeded, [403], half), exceeded.text).toBe(true);
    expect((exceeded.body as Refusal).error.message).toMatch(/^Key limit exceeded/);
    expect(await within(5_000, async () => refusedAt(await chat(b), [403], half))).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );

    // Raised again: B serves the key within the bound.
    await setLimit(10);
    expect(await within(5_000, async () => (await chat(b)).status === 200)).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );
  });

  it("after B's notification connection is cut, a change made meanwhile is still obeyed by B within the bound", async () => {
    const k = await createKey();
    expect((await http(`${b.base}/key`, { key: k.key })).status).toBe(200);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      // Every listening connection (A's and B's) is terminated; the change follows at once.
      const cut = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = $1",
        [POLICY_LISTENER_NAME],
      );
      expect(cut.rowCount).toBeGreaterThanOrEqual(2);
      await admin.query("update api_keys set disabled = 1 where hash = $1", [k.data.hash]);
    } finally {
      await admin.end();
    }
    expect(
      await within(5_000, async () => (await http(`${b.base}/key`, { key: k.key })).status === 401),
    ).toBeLessThan(POLICY_PROPAGATION_BOUND_MS);
    expect((await http(`${a.base}/key`, { key: k.key })).status).toBe(401);
  });
});
