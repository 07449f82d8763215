import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import { createWebhook, makeBroadcastApp, type BroadcastTestApp } from "../broadcast/broadcast-helpers.js";

/**
 * A redacting guardrail on the workspace's default guardrail: what Broadcast delivers of a served
 * generation (its prompt, and the mock's echo of it as the completion) carries the labels, never
 * the redacted text; the content kept for GET /generation/content (IO logging on) too.
 */
let t: BroadcastTestApp;
let rx: TestReceiver;

beforeAll(async () => {
  t = await makeBroadcastApp();
  rx = new TestReceiver();
  await rx.start();
});
afterAll(async () => {
  await t?.close();
  await rx?.stop();
});

describe("guardrail redaction → Broadcast and stored content", () => {
  it("delivers and keeps the redacted text only", async () => {
    await createWebhook(t, rx.url);
    const ws = await t.call({ method: "GET", url: `/api/v1/workspaces/${t.workspaceId}` });
    const def = ws.json<{ data: { id: string; default_guardrail_id: string } }>().data;
    const io = await t.call({
      method: "PATCH",
      url: `/api/v1/workspaces/${def.id}`,
      payload: { is_observability_io_logging_enabled: true },
    });
    expect(io.statusCode, io.body).toBe(200);
    const g = await t.call({
      method: "PATCH",
      url: `/api/v1/guardrails/${def.default_guardrail_id}`,
      payload: {
        content_filter_builtins: [
          { slug: "email", action: "redact" },
          { slug: "phone", action: "redact" },
        ],
      },
    });
    expect(g.statusCode, g.body).toBe(200);
    const created = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "app" } });
    const key = created.json<{ key: string }>().key;
    const prompt = "write to carol@example.com or call +1 415 555 0100 tomorrow";
    const res = await t.call({
      method: "POST",
      url: "/api/v1/chat/completions",
      auth: key,
      payload: { model: "mock/echo", messages: [{ role: "user", content: prompt }], stream: false },
    });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json<{ id: string; choices: { message: { content: string } }[] }>();
    // The provider (the mock echoes what it was sent) saw the labels.
    expect(answer.choices[0]!.message.content).toContain("[EMAIL]");
    expect(answer.choices[0]!.message.content).not.toContain("carol@example.com");
    t.broadcaster.start();
    await waitFor(() => rx.delivered.has(answer.id), 10_000, "the served generation delivered");
    const delivered = rx.requests.map((r) => r.body).join("\n");
    expect(delivered).toContain("write to [EMAIL] or call [PHONE] tomorrow");
    expect(delivered).not.toContain("carol@example.com");
    expect(delivered).not.toContain("555 0100");
    await t.app.gateway.recorder.settled();
    const content = await t.call({ method: "GET", url: `/api/v1/generation/content?id=${answer.id}` });
    expect(content.statusCode, content.body).toBe(200);
    expect(content.body).toContain("[EMAIL]");
    expect(content.body).not.toContain("carol@example.com");
  });
});
