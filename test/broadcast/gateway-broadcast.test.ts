import { afterEach, describe, expect, it } from "vitest";
import { sampledIn } from "../../src/broadcast/sampling.js";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import { createWebhook, makeBroadcastApp } from "./broadcast-helpers.js";

/**
 * A generation served by the gateway reaches Broadcast through the same acceptance transaction
 * as its record, with its LiveContext: the prompt and completion travel to a destination, and
 * privacy mode keeps them out.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const PROMPT = "tell the receiver about lighthouses";

async function serveOne(privacyMode: boolean) {
  const t = await makeBroadcastApp();
  const rx = new TestReceiver();
  await rx.start();
  cleanups.push(
    () => t.close(),
    () => rx.stop(),
  );
  await createWebhook(t, rx.url, { privacy_mode: privacyMode });
  const created = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "app" } });
  expect(created.statusCode).toBe(201);
  const key = created.json<{ key: string }>().key;
  const res = await t.call({
    method: "POST",
    url: "/api/v1/chat/completions",
    auth: key,
    payload: { model: "mock/echo", messages: [{ role: "user", content: PROMPT }], stream: false },
  });
  expect(res.statusCode).toBe(200);
  const answer = res.json<{ id: string; choices: { message: { content: string } }[] }>();
  t.broadcaster.start();
  await waitFor(() => rx.delivered.has(answer.id), 10_000, "the served generation delivered");
  const body = rx.requests.map((r) => r.body).join("\n");
  return { body, answer };
}

describe("gateway → Broadcast", () => {
  it("delivers a served generation with its prompt and completion", async () => {
    const { body, answer } = await serveOne(false);
    expect(body).toContain(answer.id);
    expect(body).toContain(PROMPT);
    expect(body).toContain(answer.choices[0]!.message.content);
  });

  it("privacy mode delivers it without prompt or completion", async () => {
    const { body, answer } = await serveOne(true);
    expect(body).toContain(answer.id);
    expect(body).not.toContain(PROMPT);
    expect(body).not.toContain(answer.choices[0]!.message.content);
  });
});

describe("gateway → Broadcast: sampling by session", () => {
  it("a replay samples the same sessions as the live delivery did", async () => {
    const t = await makeBroadcastApp();
    const rx = new TestReceiver();
    await rx.start();
    cleanups.push(
      () => t.close(),
      () => rx.stop(),
    );
    const dest = await createWebhook(t, rx.url, { sampling_rate: 0.5 });
    const created = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "app" } });
    const key = created.json<{ key: string }>().key;
    const sessions = Array.from({ length: 8 }, (_, i) => `session-${process.pid}-${i}`);
    const sessionOf = new Map<string, string>();
    for (const session of sessions) {
      for (let i = 0; i < 3; i++) {
        const res = await t.call({
          method: "POST",
          url: "/api/v1/chat/completions",
          auth: key,
          payload: { model: "mock/echo", messages: [{ role: "user", content: "hi" }], session_id: session },
        });
        expect(res.statusCode).toBe(200);
        sessionOf.set(res.json<{ id: string }>().id, session);
      }
    }
    const expected = [...sessionOf.keys()]
      .filter((id) => sampledIn(dest, 0.5, sessionOf.get(id)!, id))
      .sort();
    // Whole sessions in or out; some of each with these eight (the points are fixed by the ids).
    expect(expected.length % 3).toBe(0);
    t.broadcaster.start();
    await waitFor(() => rx.delivered.size === expected.length, 10_000, "the sampled sessions delivered");
    await new Promise((d) => setTimeout(d, 300));
    expect([...rx.delivered.keys()].sort()).toEqual(expected);

    rx.delivered.clear();
    const replay = await t.call({
      method: "POST",
      url: `/api/v1/observability/destinations/${dest}/replay`,
      payload: {
        from: new Date(Date.now() - 3_600_000).toISOString(),
        to: new Date(Date.now() + 1_000).toISOString(),
      },
    });
    expect(replay.statusCode).toBe(202);
    expect(replay.json<{ data: { offered: number } }>().data.offered).toBe(sessionOf.size);
    await waitFor(() => rx.delivered.size >= expected.length, 10_000, "the replay delivered");
    await new Promise((d) => setTimeout(d, 300));
    expect([...rx.delivered.keys()].sort()).toEqual(expected);
  });
});

describe("gateway → Broadcast: every API surface", () => {
  it("each surface's generation reaches a destination with its api and its prompt", async () => {
    const t = await makeBroadcastApp();
    const rx = new TestReceiver();
    await rx.start();
    cleanups.push(
      () => t.close(),
      () => rx.stop(),
    );
    await createWebhook(t, rx.url);
    const key = (await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "app" } })).json<{
      key: string;
    }>().key;
    const calls: [string, string, Record<string, unknown>][] = [
      [
        "chat",
        "/api/v1/chat/completions",
        { model: "mock/echo", messages: [{ role: "user", content: "p-chat" }] },
      ],
      ["responses", "/api/v1/responses", { model: "mock/echo", input: "p-responses", store: false }],
      [
        "messages",
        "/api/v1/messages",
        { model: "mock/echo", max_tokens: 50, messages: [{ role: "user", content: "p-messages" }] },
      ],
      ["embeddings", "/api/v1/embeddings", { model: "mock/embed", input: "p-embeddings" }],
    ];
    const ids = new Map<string, string>();
    for (const [api, url, payload] of calls) {
      const res = await t.call({ method: "POST", url, auth: key, payload });
      expect(res.statusCode, `${api}: ${res.body}`).toBe(200);
      ids.set(api, res.json<{ id: string }>().id);
    }
    t.broadcaster.start();
    await waitFor(() => [...ids.values()].every((id) => rx.delivered.has(id)), 10_000, "all four delivered");
    const spans = rx.requests.map((r) => r.body).join("\n");
    for (const [api] of calls) {
      expect(spans).toContain(`p-${api}`);
      expect(spans).toMatch(new RegExp(`"gatehouse\\.api","value":\\{"stringValue":"${api}"`));
    }
    expect(spans).toContain('"stringValue":"embeddings"');
  });
});
