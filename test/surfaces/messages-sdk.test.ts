import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPLETION_NANO, PROMPT_NANO, startSurfaceRig, type SurfaceRig } from "./surface-fixtures.js";

/**
 * The Anthropic Messages API through a listening Gatehouse with the official `@anthropic-ai/sdk`
 * (pointed at http://HOST:PORT/api, as Claude Code is), on a translated provider (the
 * OpenAI-compatible fake) and on an Anthropic one: whole answers, streams, tools, count_tokens,
 * errors in Anthropic's envelope, the key charged what the answer says, the record's api.
 */
let rig: SurfaceRig;
let key: string;
let client: Anthropic;

beforeAll(async () => {
  rig = await startSurfaceRig();
  key = await rig.key("messages");
  client = new Anthropic({ apiKey: key, baseURL: rig.s.baseUrl.replace(/\/v1$/, ""), maxRetries: 0 });
});
afterAll(() => rig?.close());

const hi = { max_tokens: 50, messages: [{ role: "user" as const, content: "Hi" }] };
const WEATHER = {
  name: "get_weather",
  description: "The weather of a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

describe("Messages API with @anthropic-ai/sdk", () => {
  for (const model of ["local/ok", "anthropic/ok"]) {
    it(`${model}: messages.create answers a Message; the key is charged its tokens at the file's prices`, async () => {
      const before = await rig.usage(key);
      const m = await client.messages.create({ model, ...hi });
      expect(m.type).toBe("message");
      expect(m.role).toBe("assistant");
      expect(m.model).toBe(model);
      expect(m.content).toEqual([expect.objectContaining({ type: "text", text: "Hello there, friend." })]);
      expect(m.stop_reason).toBe("end_turn");
      const u = m.usage as unknown as Record<string, number>;
      const prompt =
        u.input_tokens! + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
      const cost = (prompt * PROMPT_NANO + u.output_tokens! * COMPLETION_NANO) / 1e9;
      expect(u.cost).toBeCloseTo(cost, 12);
      expect((await rig.usage(key)) - before).toBeCloseTo(cost, 12);
      expect(await rig.apiOf(m.id)).toBe("messages");
    });

    it(`${model}: messages.stream() gives the text, the stop reason and the usage`, async () => {
      const stream = client.messages.stream({ model, ...hi });
      const m = await stream.finalMessage();
      expect(m.content.map((b) => (b.type === "text" ? b.text : "")).join("")).toBe("Hello there, friend.");
      expect(m.stop_reason).toBe("end_turn");
      expect(m.usage.output_tokens).toBeGreaterThan(0);
      expect(await rig.apiOf(m.id)).toBe("messages");
    });

    it(`${model}: a tool call comes back as a tool_use block with its input, streamed and not`, async () => {
      const body = { model: model.replace("/ok", "/tools"), ...hi, tools: [WEATHER] };
      const whole = await client.messages.create(body);
      const streamed = await client.messages.stream(body).finalMessage();
      for (const m of [whole, streamed]) {
        expect(m.stop_reason).toBe("tool_use");
        const call = m.content.find((b) => b.type === "tool_use");
        expect(call).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: "Paris" } });
      }
    });
  }

  it("a tool result sent back is accepted on both kinds of provider", async () => {
    for (const model of ["local/ok", "anthropic/ok"]) {
      const m = await client.messages.create({
        model,
        max_tokens: 50,
        tools: [WEATHER],
        messages: [
          { role: "user", content: "Weather in Paris?" },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Paris" } }],
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_9", content: "sunny" }] },
        ],
      });
      expect(m.content[0]).toMatchObject({ type: "text" });
    }
  });

  it("count_tokens answers the prompt's estimate without charging", async () => {
    const before = await rig.usage(key);
    const r = await client.messages.countTokens({
      model: "local/ok",
      messages: [{ role: "user", content: "Hello there" }],
    });
    expect(r.input_tokens).toBeGreaterThan(0);
    expect(await rig.usage(key)).toBe(before);
  });

  it("errors come in Anthropic's envelope with the SDK's error classes", async () => {
    const bad = client.messages.create({
      model: "local/ok",
      max_tokens: 10,
      messages: [{ role: "robot" as never, content: "x" }],
    });
    await expect(bad).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(bad).rejects.toMatchObject({
      status: 400,
      error: { type: "error", error: { type: "invalid_request_error" } },
    });
    const stranger = new Anthropic({
      apiKey: "sk-gh-v1-" + "0".repeat(64),
      baseURL: client.baseURL,
      maxRetries: 0,
    });
    await expect(stranger.messages.create({ model: "local/ok", ...hi })).rejects.toBeInstanceOf(
      Anthropic.AuthenticationError,
    );
    const unknown = client.messages.create({ model: "nobody/none", ...hi });
    await expect(unknown).rejects.toMatchObject({ error: { type: "error", request_id: null } });
  });

  it("takes the key as x-api-key (Claude Code with ANTHROPIC_API_KEY), on /v1/messages?beta=true", async () => {
    const r = await fetch(`${rig.s.baseUrl}/messages?beta=true`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "local/ok", ...hi, cache_control: { type: "ephemeral" } }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-gatehouse-left-out")).toContain("cache_control");
    expect(((await r.json()) as { type: string }).type).toBe("message");
  });

  it("Authorization wins over x-api-key when both come: a bad Bearer is refused whatever x-api-key says", async () => {
    const send = (headers: Record<string, string>) =>
      fetch(`${rig.s.baseUrl}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
        body: JSON.stringify({ model: "local/ok", ...hi }),
      });
    const wrongBearer = await send({ authorization: "Bearer sk-gh-v1-not-a-key", "x-api-key": key });
    expect(wrongBearer.status).toBe(401);
    expect(((await wrongBearer.json()) as { error: { type: string } }).error.type).toBe(
      "authentication_error",
    );
    const rightBearer = await send({ authorization: `Bearer ${key}`, "x-api-key": "sk-gh-v1-not-a-key" });
    expect(rightBearer.status).toBe(200);
  });

  it("an anthropic provider gets the request as sent: cache_control, signed thinking, betas, context_management", async () => {
    const signed = { type: "thinking", thinking: "Earlier thought.", signature: "sig-earlier" };
    const body = {
      model: "anthropic/ok",
      max_tokens: 2000,
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      thinking: { type: "enabled", budget_tokens: 1024 },
      context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
      session_id: "router-only",
      messages: [
        { role: "user", content: "Weather?" },
        {
          role: "assistant",
          content: [
            signed,
            { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          ],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: "sunny",
              cache_control: { type: "ephemeral" },
            },
          ],
        },
      ],
      tools: [WEATHER],
    };
    const seen = rig.anthropic.requests.length;
    const r = await fetch(`${rig.s.baseUrl}/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "anthropic-beta": "context-management-2025-06-27",
      },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    const sent = rig.anthropic.requests.slice(seen).at(-1)!;
    expect(sent.headers["anthropic-beta"]).toBe("context-management-2025-06-27");
    expect(sent.body.model).toBe("ok");
    expect(sent.body.system).toEqual(body.system);
    expect(sent.body.context_management).toEqual(body.context_management);
    expect(sent.body.thinking).toEqual(body.thinking);
    expect(sent.body.messages[1].content[0]).toEqual(signed);
    expect(sent.body.messages[2].content[0].cache_control).toEqual({ type: "ephemeral" });
    expect(sent.body.session_id).toBeUndefined();
    expect(sent.body.max_tokens).toBeLessThanOrEqual(2000);

    // The same request to a chat-completions provider is translated: nothing of Anthropic's own.
    const seenLocal = rig.openai.requests.length;
    const t = await fetch(`${rig.s.baseUrl}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...body, model: "local/ok" }),
    });
    expect(t.status).toBe(200);
    expect(t.headers.get("x-gatehouse-left-out")).toContain("context_management");
    const translated = JSON.stringify(rig.openai.requests.slice(seenLocal).at(-1)!.body);
    expect(translated).not.toContain("cache_control");
    expect(translated).not.toContain("context_management");
  });
});
