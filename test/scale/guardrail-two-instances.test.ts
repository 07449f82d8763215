import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_SKIP_REASON, PG_URL, freshPostgresDatabase } from "../helpers/stores.js";
import { http, killAll, startServer, type ChildServer } from "../helpers/child-server.js";

/**
 * Two gateway instances (child processes) on one PostgreSQL enforce a member guardrail's budget
 * together: 200 concurrent requests from two keys the member created, in two workspaces, split
 * over both instances, never settle more than the budget (the member's keys' holds are serialised
 * by the member's advisory lock, across workspaces and instances), and every refusal is the
 * guardrail's 403.
 */
const SKIP = !PG_URL;
if (SKIP) console.warn(`guardrail budgets on two instances: ${PG_SKIP_REASON}`);

const WORDS = Array.from({ length: 150 }, (_, i) => `w${i}`).join(" ");
const MAX_TOKENS = 100;

describe.skipIf(SKIP)("guardrail budget on PostgreSQL: two instances, one member, two workspaces", () => {
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
      GATEHOUSE_MAX_IN_FLIGHT_PER_KEY: "0",
      LOG_LEVEL: "info",
      GATEHOUSE_ALLOW_SPLIT_ANALYTICS: "true",
    };
    a = await startServer(env);
    b = await startServer(env);
  }, 60_000);

  afterAll(async () => {
    killAll();
    await db?.drop();
  });

  const chat = async (base: string, key: string) => {
    const res = await fetch(`${base}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "mock/echo",
        messages: [{ role: "user", content: WORDS }],
        max_tokens: MAX_TOKENS,
      }),
      signal: AbortSignal.timeout(90_000),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it("200 concurrent requests never settle more than the member's budget", async () => {
    const member = await http(`${a.base}/organization/members`, {
      method: "POST",
      key: bootKey,
      body: { email: "racer@example.com" },
    });
    expect(member.status).toBe(201);
    const userId = (member.body as { data: { id: string } }).data.id;
    const second = await http(`${a.base}/workspaces`, {
      method: "POST",
      key: bootKey,
      body: { name: "Second", slug: "second" },
    });
    expect(second.status).toBe(201);
    const workspaces = [undefined, (second.body as { data: { id: string } }).data.id];
    const keys: { key: string; hash: string }[] = [];
    for (const [i, ws] of workspaces.entries()) {
      const k = await http(`${a.base}/keys`, {
        method: "POST",
        key: bootKey,
        body: { name: `racer-${i}`, creator_user_id: userId, ...(ws ? { workspace_id: ws } : {}) },
      });
      expect(k.status).toBe(201);
      const body = k.body as { key: string; data: { hash: string } };
      keys.push({ key: body.key, hash: body.data.hash });
    }
    // A probe (another key, no guardrail) sizes the worst case: the budget fits 40 of them.
    const probeKey = (await http(`${a.base}/keys`, { method: "POST", key: bootKey, body: { name: "probe" } }))
      .body.key as string;
    const probe = await chat(a.base, probeKey);
    expect(probe.status).toBe(200);
    const worst = (probe.body.usage.prompt_tokens * 1 + MAX_TOKENS * 2) / 1e6;
    const limit = Number((worst * 40).toFixed(6));
    const g = await http(`${a.base}/guardrails`, {
      method: "POST",
      key: bootKey,
      body: { name: "Racer budget", limit_usd: limit, reset_interval: "daily" },
    });
    expect(g.status).toBe(201);
    const guardrailId = (g.body as { data: { id: string } }).data.id;
    const assigned = await http(`${a.base}/guardrails/${guardrailId}/assignments/members`, {
      method: "POST",
      key: bootKey,
      body: { member_user_ids: [userId] },
    });
    expect(assigned.status).toBe(200);
    // Instance B learns of the assignment through PostgreSQL's notification (within 1 s).
    await new Promise((r) => setTimeout(r, 1_100));

    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        chat(i % 2 === 0 ? a.base : b.base, keys[Math.floor(i / 2) % 2]!.key),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 403);
    const odd = results.filter((r) => r.status !== 200 && r.status !== 403);
    expect(odd.map((r) => `${r.status} ${JSON.stringify(r.body)}`).slice(0, 3)).toEqual([]);
    expect(ok.length).toBeGreaterThan(10);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.body.error.metadata).toMatchObject({
        scope: "guardrail",
        guardrail_id: guardrailId,
        holder: "member",
      });
    }
    let spent = 0;
    for (const k of keys) spent += (await http(`${b.base}/key`, { key: k.key })).body.data.usage as number;
    expect(spent).toBeLessThanOrEqual(limit + 1e-9);
    const answered = ok.reduce((s, r) => s + (r.body.usage.cost as number), 0);
    expect(spent).toBeCloseTo(answered, 9);
  }, 180_000);
});
