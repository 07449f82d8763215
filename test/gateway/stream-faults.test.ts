import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { leaveStreamAfter } from "../helpers/leave-stream.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/** Stream endings other than success: the client leaves, the upstream breaks; each settles once. */
describe("gateway streams: disconnect and mid-stream failure", () => {
  let s: ListeningApp;
  let key: string;
  beforeAll(async () => {
    s = await startListening({ clock: systemClock });
    key = (
      await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "streams", limit: 1 } })
    ).json<{ key: string }>().key;
  });
  afterAll(() => s.close());

  const usage = async () =>
    (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>().data
      .usage;

  it("a client that disconnects mid-stream cancels the upstream; what was generated is charged once", async () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    // After a few chunks, walk away.
    const genId = await leaveStreamAfter(
      s.baseUrl,
      key,
      {
        model: "mock/echo",
        stream: true,
        messages: [{ role: "user", content: `${words} [[mock chunks=40 chunk_delay_ms=25]]` }],
      },
      4,
    );
    // The settle runs when the server sees the close: wait for the record.
    let rec: { cancelled: boolean; tokens_completion: number; usage_nano: string } | undefined;
    for (let i = 0; i < 100 && !rec; i++) {
      const row = await s.ctx.store.db
        .selectFrom("gateway_generations")
        .select("detail")
        .where("id", "=", genId)
        .executeTakeFirst();
      if (row) rec = JSON.parse(row.detail) as typeof rec;
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(rec?.cancelled).toBe(true);
    // Only part of the 40-chunk answer was generated, and that part is charged.
    expect(rec!.tokens_completion).toBeGreaterThan(0);
    expect(rec!.tokens_completion).toBeLessThan(40);
    expect(await usage()).toBeCloseTo(Number(BigInt(rec!.usage_nano)) / 1e9, 12);
    expect(await s.app.gateway.holds.store.openCount()).toBe(0);
    expect(s.app.gateway.holds.liveCount).toBe(0);
    // Nothing more arrives later: one settle.
    await new Promise((r) => setTimeout(r, 1_200));
    expect(await usage()).toBeCloseTo(Number(BigInt(rec!.usage_nano)) / 1e9, 12);
  });

  it("an upstream that breaks after the first byte ends the stream with an error chunk and [DONE]; output is charged", async () => {
    const before = await usage();
    const r = await fetch(`${s.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        models: ["mock/echo", "mock/unavailable"],
        stream: true,
        messages: [{ role: "user", content: "one two three four five six [[mock chunks=6 fail_after=3]]" }],
      }),
    });
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    const events = text
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);
    const last = events.at(-1) as {
      choices: { finish_reason: string }[];
      error: { code: number; message: string };
      usage: { cost: number };
    };
    expect(last.choices[0]?.finish_reason).toBe("error");
    expect(last.error.code).toBe(502);
    expect(last.usage.cost).toBeGreaterThan(0);
    // No fallback after the first byte: every chunk came from mock/echo, none from a second model.
    expect(events.every((e) => e.model === "mock/echo")).toBe(true);
    expect(await usage()).toBeCloseTo(before + last.usage.cost, 12);
    expect(text).not.toContain('"usage":null');
  });
});
