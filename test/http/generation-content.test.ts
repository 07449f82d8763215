import type { OpenRouter } from "@openrouter/sdk";
import type { Category, ChatResult } from "@openrouter/sdk/models";
import * as errors from "@openrouter/sdk/models/errors";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { sweepGenerationContent } from "../../src/gateway/content-log/content-sweep.js";
import { openContent } from "../../src/gateway/content-log/logged-content.js";
import { hashKey } from "../../src/lib/ids.js";
import { dataUrl, pngBytes } from "../helpers/images.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * GET /generation/content and POST /generation/feedback through @openrouter/sdk 1.3.19 against a
 * listening server with the built-in mock (docs/content-logging.md): content is kept only where
 * the workspace turned IO logging on (its key list and sampling rate honoured), sealed at rest,
 * images as placeholders, served to the key that made it and its organization's management keys,
 * gone past the retention; feedback is validated, stored and counted by GET /generation.
 */
const DAY_MS = 86_400_000;
const RETENTION_MS = 30 * DAY_MS;

describe("generation content and feedback", () => {
  let s: ListeningApp;
  let admin: OpenRouter;
  let key: string;
  let other: string;
  let keyId: number;

  const createKey = async (name: string): Promise<string> => {
    const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name } });
    expect(r.statusCode).toBe(201);
    return r.json<{ key: string }>().key;
  };
  /** PATCH of the workspace's IO logging settings (through the API, so the policy cache learns it). */
  const setIoLogging = async (body: Record<string, unknown>): Promise<void> => {
    const r = await s.call({ method: "PATCH", url: `/api/v1/workspaces/${s.workspaceId}`, payload: body });
    expect(r.statusCode, r.body).toBe(200);
  };
  /** One chat completion through the SDK; resolves once its content (if any) is logged. */
  const chat = async (k: string, content: unknown, sessionId?: string): Promise<string> => {
    const res = <ChatResult>await s.sdk(k).chat.send({
      chatRequest: {
        model: "mock/echo",
        messages: [{ role: "user", content: content as string }],
        stream: false,
        ...(sessionId ? { sessionId } : {}),
      },
    });
    await s.app.gateway.recorder.settled();
    await s.app.gateway.contentLog.idle();
    return res.id;
  };
  const rawRow = (id: string) =>
    s.ctx.store.db.selectFrom("generation_content").selectAll().where("id", "=", id).executeTakeFirst();
  const getContent = (k: string, id: string) =>
    fetch(`${s.baseUrl}/generation/content?id=${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${k}` },
    });
  const feedback = (k: string, body: unknown) =>
    fetch(`${s.baseUrl}/generation/feedback`, {
      method: "POST",
      headers: { authorization: `Bearer ${k}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    s = await startListening();
    admin = s.sdk();
    key = await createKey("app");
    other = await createKey("other");
    keyId = (await s.ctx.policy.keyByHash(hashKey(key)))!.id;
  });
  afterAll(() => s.close());
  beforeEach(async () => {
    await setIoLogging({
      is_observability_io_logging_enabled: false,
      io_logging_sampling_rate: 1,
      io_logging_api_key_ids: null,
    });
  });

  it("IO logging off (the default): nothing is stored and GET /generation/content is 404", async () => {
    const id = await chat(key, "not logged");
    expect(await rawRow(id)).toBeUndefined();
    await expect(admin.generations.listGenerationContent({ id })).rejects.toBeInstanceOf(
      errors.NotFoundResponseError,
    );
    // GET /generation still knows the generation: only its content is absent.
    expect((await admin.generations.getGeneration({ id })).data.id).toBe(id);
  });

  it("IO logging on: the SDK parses the prompt and completion, for the key that made it and a management key", async () => {
    await setIoLogging({ is_observability_io_logging_enabled: true });
    const id = await chat(key, "Hello content log");
    for (const k of [key, s.key]) {
      const got = await s.sdk(k).generations.listGenerationContent({ id });
      expect(got.data.input).toEqual({ messages: [{ role: "user", content: "Hello content log" }] });
      expect(got.data.output).toEqual({ completion: "Echo: Hello content log", reasoning: null });
      expect(got.data.error).toBeNull();
    }
    const raw = await getContent(s.key, id);
    expect(raw.status).toBe(200);
    expect(await raw.json()).toEqual({
      data: {
        input: { messages: [{ role: "user", content: "Hello content log" }] },
        output: { completion: "Echo: Hello content log", reasoning: null },
        error: null,
      },
    });
    // Another key of the same organization did not make it.
    await expect(s.sdk(other).generations.listGenerationContent({ id })).rejects.toBeInstanceOf(
      errors.NotFoundResponseError,
    );
    expect((await getContent(key, "gen-no-such-generation")).status).toBe(404);
  });

  it("the stored content is encrypted at rest: no column holds the prompt or completion", async () => {
    await setIoLogging({ is_observability_io_logging_enabled: true });
    const id = await chat(key, "secret-prompt-marker");
    const row = await rawRow(id);
    expect(row).toBeDefined();
    const asText = JSON.stringify(row);
    expect(asText).not.toContain("secret-prompt-marker");
    expect(row!.content_ciphertext).toMatch(/^v1\./);
    expect(row!.key_hash).toBe(hashKey(key));
    expect(row!.workspace_id).toBe(s.workspaceId);
    // Bound to its row: the ciphertext does not open as another generation's.
    expect(() =>
      openContent(s.ctx.secretBox, s.organizationId, "gen-other", row!.content_ciphertext),
    ).toThrow();
    expect(openContent(s.ctx.secretBox, s.organizationId, id, row!.content_ciphertext).completion).toBe(
      "Echo: secret-prompt-marker",
    );
  });

  it("io_logging_api_key_ids: only the listed keys' generations are kept ([]: none, null: all)", async () => {
    await setIoLogging({ is_observability_io_logging_enabled: true, io_logging_api_key_ids: [keyId] });
    const listed = await chat(key, "listed key");
    const unlisted = await chat(other, "unlisted key");
    expect(await rawRow(listed)).toBeDefined();
    expect(await rawRow(unlisted)).toBeUndefined();
    expect((await getContent(s.key, unlisted)).status).toBe(404);
    // [] keeps no key's (docs/api-notes.md); null every key's again.
    await setIoLogging({ io_logging_api_key_ids: [] });
    expect(await rawRow(await chat(key, "no key at all"))).toBeUndefined();
    await setIoLogging({ io_logging_api_key_ids: null });
    expect(await rawRow(await chat(other, "every key again"))).toBeDefined();
  });

  it("sampling rate 0 keeps nothing; a fractional rate keeps some sessions whole and leaves others out", async () => {
    await setIoLogging({ is_observability_io_logging_enabled: true });
    // The API's floor is 0.0001; a stored 0 (an operator's direct edit) keeps nothing.
    await s.ctx.store.db.updateTable("workspaces").set({ io_logging_sampling_rate: 0 }).execute();
    s.ctx.policy.workspaceChanged(s.workspaceId);
    const ids = [await chat(key, "sampled out 1"), await chat(key, "sampled out 2")];
    for (const id of ids) expect(await rawRow(id)).toBeUndefined();

    await setIoLogging({ io_logging_sampling_rate: 0.5 });
    const kept: boolean[] = [];
    for (let i = 0; i < 16; i++) {
      // two generations of one session: both kept or both left out
      const a = await chat(key, `session ${i} a`, `sess-${i}`);
      const b = await chat(key, `session ${i} b`, `sess-${i}`);
      const [ra, rb] = [await rawRow(a), await rawRow(b)];
      expect(ra === undefined).toBe(rb === undefined);
      kept.push(ra !== undefined);
    }
    // 16 sessions at one half: all in or all out has a chance of 2 in 65,536.
    expect(kept).toContain(true);
    expect(kept).toContain(false);
  });

  it("an image part is stored as its placeholder, never its bytes", async () => {
    await setIoLogging({ is_observability_io_logging_enabled: true });
    const image = dataUrl("image/png", pngBytes(640, 480, 64 * 1024));
    const id = await chat(key, [
      { type: "text", text: "describe this" },
      { type: "image_url", imageUrl: { url: image } },
    ]);
    const got = await admin.generations.listGenerationContent({ id });
    const messages = (got.data.input as { messages: { content: unknown[] }[] }).messages;
    expect(messages[0]!.content[0]).toEqual({ type: "text", text: "describe this" });
    expect(messages[0]!.content[1]).toMatchObject({ type: "image", media_type: "image/png" });
    expect(JSON.stringify(got)).not.toContain("iVBORw0KGgo");
    const row = await rawRow(id);
    const opened = openContent(s.ctx.secretBox, s.organizationId, id, row!.content_ciphertext);
    expect(JSON.stringify(opened)).not.toContain("iVBORw0KGgo");
    expect(row!.content_ciphertext.length).toBeLessThan(4096);
  });

  it("retention: content past 30 days is not served, and the sweep deletes it and only it", async () => {
    await setIoLogging({ is_observability_io_logging_enabled: true });
    const start = s.clock.now();
    try {
      const old = await chat(key, "old content");
      s.clock.advance(20 * DAY_MS);
      const recent = await chat(key, "recent content");
      s.clock.advance(9 * DAY_MS); // old: 29 days
      expect((await getContent(s.key, old)).status).toBe(200);
      s.clock.advance(DAY_MS + 1000); // old: just past 30 days; recent: 10 days
      expect((await getContent(s.key, old)).status).toBe(404);
      expect(await rawRow(old)).toBeDefined(); // not yet swept: reads already refuse it

      const deleted = await sweepGenerationContent(s.ctx.store.db, s.clock.now(), RETENTION_MS);
      expect(deleted).toBeGreaterThanOrEqual(1);
      expect(await rawRow(old)).toBeUndefined();
      expect(await rawRow(recent)).toBeDefined();
      expect((await getContent(s.key, recent)).status).toBe(200);
    } finally {
      s.clock.set(start);
    }
  });

  it("another organization gets 404 for content and for feedback", async () => {
    await setIoLogging({ is_observability_io_logging_enabled: true });
    const id = await chat(key, "mine only");
    const stranger = await createOrganization(s.ctx.store, s.clock, "Another organization");
    await expect(
      s.sdk(stranger.managementKey).generations.listGenerationContent({ id }),
    ).rejects.toBeInstanceOf(errors.NotFoundResponseError);
    const r = await feedback(stranger.managementKey, { generation_id: id, category: "other" });
    expect(r.status).toBe(404);
  });

  it("feedback: stored, answered 200 {data:{success:true}} (the SDK parses it), counted by GET /generation", async () => {
    const id = await chat(key, "rate me");
    const feedbackCount = async (): Promise<number> => {
      const r = await fetch(`${s.baseUrl}/generation?id=${id}`, {
        headers: { authorization: `Bearer ${s.key}` },
      });
      return ((await r.json()) as { data: { feedback_count: number } }).data.feedback_count;
    };
    expect(await feedbackCount()).toBe(0);

    const res = await admin.generations.submitFeedback({
      submitGenerationFeedbackRequest: {
        generationId: id,
        category: "incorrect_response",
        comment: "wrong answer",
      },
    });
    expect(res).toEqual({ data: { success: true } });
    const raw = await feedback(s.key, { generation_id: id, category: "latency" });
    expect(raw.status).toBe(200);
    expect(await raw.json()).toEqual({ data: { success: true } });

    const rows = await s.ctx.store.db
      .selectFrom("generation_feedback")
      .selectAll()
      .where("generation_id", "=", id)
      .orderBy("category")
      .execute();
    expect(rows.map((r) => [r.category, r.comment, r.organization_id, r.key_hash])).toEqual([
      ["incorrect_response", "wrong answer", s.organizationId, hashKey(s.key)],
      ["latency", null, s.organizationId, hashKey(s.key)],
    ]);
    expect(await feedbackCount()).toBe(2);
  });

  it("feedback validation names the field; an unknown generation is 404; an ordinary key is 403", async () => {
    const id = await chat(key, "validate me");
    const cases: [unknown, string][] = [
      [{ category: "other" }, "generation_id: is required"],
      [{ generation_id: "", category: "other" }, "generation_id: at least 1 character"],
      [{ generation_id: id }, "category: is required"],
      [{ generation_id: id, category: "rude" }, "category: must be one of latency, incoherence"],
      [
        { generation_id: id, category: "other", comment: "x".repeat(1001) },
        "comment: at most 1000 characters",
      ],
      [{ generation_id: id, category: "other", comment: null }, "comment: must be string"],
    ];
    for (const [body, message] of cases) {
      const r = await feedback(s.key, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(((await r.json()) as { error: { message: string } }).error.message).toContain(message);
    }
    // The SDK's category enum is open (its type names the known ones only; any string is sent):
    // the server's 400 reaches it as its BadRequest class.
    const unknownCategory = "rude" as Category;
    await expect(
      admin.generations.submitFeedback({
        submitGenerationFeedbackRequest: { generationId: id, category: unknownCategory },
      }),
    ).rejects.toBeInstanceOf(errors.BadRequestResponseError);
    await expect(
      admin.generations.submitFeedback({
        submitGenerationFeedbackRequest: { generationId: "gen-unknown", category: "other" },
      }),
    ).rejects.toBeInstanceOf(errors.NotFoundResponseError);
    expect((await feedback(key, { generation_id: id, category: "other" })).status).toBe(403);
    const stored = await s.ctx.store.db
      .selectFrom("generation_feedback")
      .select("id")
      .where("generation_id", "=", id)
      .execute();
    expect(stored).toEqual([]);
  });
});
