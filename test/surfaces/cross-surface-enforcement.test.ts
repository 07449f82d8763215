import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { leaveStreamAfter } from "../helpers/leave-stream.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * One key limit and one workspace budget under concurrent requests over every API surface (chat,
 * Responses, Messages, embeddings; streamed and not): whatever the interleaving, settled spend
 * never exceeds the limit, every hold is finished, and the key's usage is exactly the sum of the
 * costs the answers reported, each in its own surface's shape.
 */
const TEXT = `${"word ".repeat(40)}[[mock chunk_delay_ms=2]]`;
const MAX = 60;

type Surface = "chat" | "responses" | "messages" | "embeddings";
const SURFACES: Surface[] = ["chat", "responses", "messages", "embeddings"];

function request(surface: Surface, stream: boolean): { url: string; body: Record<string, unknown> } {
  switch (surface) {
    case "chat":
      return {
        url: "/chat/completions",
        body: { model: "mock/echo", messages: [{ role: "user", content: TEXT }], max_tokens: MAX, stream },
      };
    case "responses":
      return {
        url: "/responses",
        body: { model: "mock/echo", input: TEXT, max_output_tokens: MAX, stream, store: false },
      };
    case "messages":
      return {
        url: "/messages",
        body: { model: "mock/echo", messages: [{ role: "user", content: TEXT }], max_tokens: MAX, stream },
      };
    case "embeddings":
      return { url: "/embeddings", body: { model: "mock/embed", input: [TEXT, TEXT] } };
  }
}

const events = (text: string): Record<string, any>[] =>
  text
    .split("\n\n")
    .map((e) => e.split("\n").find((l) => l.startsWith("data: {")))
    .filter((l): l is string => l !== undefined)
    .map((l) => JSON.parse(l.slice(6)) as Record<string, any>);

/** The cost an answer reported, in its surface's shape (0 for a refusal). */
function costOf(surface: Surface, stream: boolean, status: number, text: string): number {
  if (status !== 200) return 0;
  if (!stream || surface === "embeddings")
    return (JSON.parse(text) as { usage: { cost: number } }).usage.cost;
  const all = events(text);
  const cost = (u: unknown): number => (u as { cost: number }).cost;
  if (surface === "chat") return cost(all.find((c) => c.usage)?.usage);
  if (surface === "responses")
    return cost((all.find((e) => e.type === "response.completed")?.response as { usage: unknown }).usage);
  return cost(all.find((e) => e.type === "message_delta")?.usage);
}

let s: ListeningApp;
beforeAll(async () => {
  s = await startListening({
    clock: systemClock,
    env: {
      GATEHOUSE_MOCK_LATENCY_MS: "3",
      RATE_LIMIT_MANAGEMENT_MAX: "100000",
      RATE_LIMIT_INFERENCE_MAX: "100000",
    },
  });
});
afterAll(() => s?.close());

async function storm(keys: string[], n: number) {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const surface = SURFACES[i % 4]!;
      const stream = Math.floor(i / 4) % 2 === 0;
      const { url, body } = request(surface, stream);
      const r = await fetch(`${s.baseUrl}${url}`, {
        method: "POST",
        headers: { authorization: `Bearer ${keys[i % keys.length]}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const text = await r.text();
      return { surface, status: r.status, cost: costOf(surface, stream, r.status, text) };
    }),
  );
}

const createKey = async (body: Record<string, unknown>): Promise<string> => {
  const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: body });
  expect(r.statusCode).toBe(201);
  return r.json<{ key: string }>().key;
};

describe("enforcement across API surfaces", () => {
  it("one key limit: settled spend <= limit, usage = sum of the costs answered on every surface", async () => {
    // Worst case of a chat-like request ≈ (60 prompt + 60 completion) tokens at 1 and 2 USD/M.
    const limit = 0.004;
    const key = await createKey({ name: "cross-surface", limit });
    const results = await storm([key], 160);
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402 || r.status === 403);
    expect(ok.length + refused.length).toBe(160);
    expect(refused.length).toBeGreaterThan(0);
    for (const surface of SURFACES) expect(ok.some((r) => r.surface === surface)).toBe(true);
    const usage = (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{
      data: { usage: number };
    }>().data.usage;
    expect(usage).toBeLessThanOrEqual(limit);
    expect(usage).toBeCloseTo(
      results.reduce((sum, r) => sum + r.cost, 0),
      9,
    );
    expect(await s.app.gateway.holds.store.openCount()).toBe(0);
  });

  it("one workspace budget over four keys: spend <= the budget, = the sum answered", async () => {
    const ws = await s.call({
      method: "POST",
      url: "/api/v1/workspaces",
      payload: { name: "X", slug: "x-surfaces" },
    });
    const wsId = ws.json<{ data: { id: string } }>().data.id;
    const budget = 0.004;
    const put = await s.call({
      method: "PUT",
      url: `/api/v1/workspaces/${wsId}/budgets/daily`,
      payload: { limit_usd: budget },
    });
    expect(put.statusCode).toBe(200);
    const keys = await Promise.all([0, 1, 2, 3].map((i) => createKey({ name: `w${i}`, workspace_id: wsId })));
    const results = await storm(keys, 160);
    expect(results.filter((r) => r.status === 403).length).toBeGreaterThan(0);
    const b = await s.call({ method: "GET", url: `/api/v1/workspaces/${wsId}/budgets/daily` });
    const spent = b.json<{ data: { spent_usd: number } }>().data.spent_usd;
    expect(spent).toBeLessThanOrEqual(budget);
    expect(spent).toBeCloseTo(
      results.reduce((sum, r) => sum + r.cost, 0),
      9,
    );
    expect(await s.app.gateway.holds.store.openCount()).toBe(0);
  });
});

describe("a client leaving mid-stream, on each surface", () => {
  const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
  const text = `${words} [[mock chunks=40 chunk_delay_ms=25]]`;
  const bodies: [string, Record<string, unknown>][] = [
    ["/chat/completions", { model: "mock/echo", stream: true, messages: [{ role: "user", content: text }] }],
    ["/responses", { model: "mock/echo", stream: true, store: false, input: text }],
    [
      "/messages",
      { model: "mock/echo", stream: true, max_tokens: 500, messages: [{ role: "user", content: text }] },
    ],
  ];
  for (const [path, body] of bodies) {
    it(`${path}: what was generated is charged once, as a cancelled generation`, async () => {
      const key = await createKey({ name: `leave${path}`, limit: 1 });
      const id = await leaveStreamAfter(s.baseUrl, key, body, 5, path);
      let rec: { cancelled: boolean; tokens_completion: number; usage_nano: string } | undefined;
      for (let i = 0; i < 100 && !rec; i++) {
        const row = await s.ctx.store.db
          .selectFrom("gateway_generations")
          .select("detail")
          .where("id", "=", id)
          .executeTakeFirst();
        if (row) rec = JSON.parse(row.detail) as typeof rec;
        else await new Promise((r) => setTimeout(r, 50));
      }
      expect(rec?.cancelled).toBe(true);
      expect(rec!.tokens_completion).toBeGreaterThan(0);
      expect(rec!.tokens_completion).toBeLessThan(40);
      await s.app.gateway.recorder.settled();
      const usage = (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{
        data: { usage: number };
      }>().data.usage;
      expect(usage).toBeCloseTo(Number(BigInt(rec!.usage_nano)) / 1e9, 12);
      expect(await s.app.gateway.holds.store.openCount()).toBe(0);
    });
  }
});
