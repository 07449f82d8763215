import { afterEach, describe, expect, it } from "vitest";
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
