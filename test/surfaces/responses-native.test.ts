import OpenAI from "openai";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RESPONSES_CALL,
  RESPONSES_ENCRYPTED,
  RESPONSES_SUMMARY,
  RESPONSES_TEXT,
  RESPONSES_USAGE,
} from "../helpers/fake-upstreams/openai-responses.js";
import { COMPLETION_NANO, PROMPT_NANO, startSurfaceRig, type SurfaceRig } from "./surface-fixtures.js";

/**
 * Native Responses pass-through through a listening Gatehouse with the `openai` package: to a
 * provider that declares `responses: true` (`native/*`), the client's body goes to the fake's
 * POST /v1/responses as sent (fields the chat translation drops arrive intact; router fields,
 * the model, the cap and `store` set by Gatehouse), and its answer (text, function call,
 * reasoning, usage) comes back through Gatehouse's own Responses encoders, charged at the file's
 * prices. The same request to a provider without the flag (`local/*`) is still translated to chat.
 */
let rig: SurfaceRig;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  rig = await startSurfaceRig();
  key = await rig.key("responses-native");
  client = new OpenAI({ apiKey: key, baseURL: rig.s.baseUrl, maxRetries: 0 });
});
afterAll(() => rig?.close());

const WEATHER = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

/** What the OpenAI fake received while `fn` ran: each request's path and body. */
async function received<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; sent: { path: string; body: any }[] }> {
  const from = rig.openai.requests.length;
  const result = await fn();
  return { result, sent: rig.openai.requests.slice(from).map((r) => ({ path: r.path, body: r.body })) };
}

const COST =
  (RESPONSES_USAGE.input_tokens * PROMPT_NANO + RESPONSES_USAGE.output_tokens * COMPLETION_NANO) / 1e9;

/** Fields the chat translation leaves out, and router fields a native request must not carry upstream. */
const BODY = {
  input: "Hi",
  max_output_tokens: 50,
  store: false,
  include: ["reasoning.encrypted_content", "web_search_call.action.sources"],
  truncation: "auto",
  prompt_cache_key: "tenant-7",
  tools: [WEATHER, { type: "web_search" }],
  provider: { sort: "price" },
} as const;

describe("Responses to a provider with responses: true", () => {
  it("responses.create: the fake gets the client's body on /v1/responses; the answer and usage come back, charged at the file's prices", async () => {
    const before = await rig.usage(key);
    const { result: r, sent } = await received(() =>
      client.responses.create({ model: "native/ok", ...BODY } as never),
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe("/v1/responses");
    const body = sent[0]!.body;
    expect(body).toMatchObject({
      model: "ok",
      input: "Hi",
      stream: false,
      store: false,
      max_output_tokens: 50,
      include: BODY.include,
      truncation: "auto",
      prompt_cache_key: "tenant-7",
      tools: [WEATHER, { type: "web_search" }],
    });
    expect(body.provider).toBeUndefined();
    expect(r.status).toBe("completed");
    expect(r.output_text).toBe(RESPONSES_TEXT.join(""));
    const u = r.usage as unknown as Record<string, any>;
    expect(u.input_tokens).toBe(RESPONSES_USAGE.input_tokens);
    expect(u.output_tokens).toBe(RESPONSES_USAGE.output_tokens);
    expect(u.input_tokens_details.cached_tokens).toBe(6);
    expect(u.output_tokens_details.reasoning_tokens).toBe(3);
    expect(u.cost).toBeCloseTo(COST, 12);
    expect((await rig.usage(key)) - before).toBeCloseTo(COST, 12);
    expect(await rig.apiOf(r.id)).toBe("responses");
  });

  it("streamed: the events arrive in order, with the text and the usage; the fake was asked for a stream", async () => {
    const before = await rig.usage(key);
    const { result, sent } = await received(async () => {
      const events: ResponseStreamEvent[] = [];
      const stream = await client.responses.create({ model: "native/ok", ...BODY, stream: true } as never);
      for await (const e of stream as unknown as AsyncIterable<ResponseStreamEvent>) events.push(e);
      return events;
    });
    expect(sent[0]!.path).toBe("/v1/responses");
    expect(sent[0]!.body).toMatchObject({ stream: true, store: false, truncation: "auto" });
    const types = result.map((e) => e.type);
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    const text = result.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(text.join("")).toBe(RESPONSES_TEXT.join(""));
    const last = result.at(-1);
    if (last?.type !== "response.completed") throw new Error("expected response.completed last");
    const done = last.response;
    expect(done.output).toMatchObject([{ type: "message", content: [{ text: RESPONSES_TEXT.join("") }] }]);
    const usage = done.usage as unknown as Record<string, number>;
    expect(usage.input_tokens).toBe(RESPONSES_USAGE.input_tokens);
    expect(usage.output_tokens).toBe(RESPONSES_USAGE.output_tokens);
    expect(usage.cost).toBeCloseTo(COST, 12);
    expect((await rig.usage(key)) - before).toBeCloseTo(COST, 12);
    const final = await client.responses
      .stream({ model: "native/ok", input: "Hi", store: false })
      .finalResponse();
    expect(final.output_text).toBe(RESPONSES_TEXT.join(""));
  });

  it("a function call comes back as a function_call item, streamed and not", async () => {
    const body = { model: "native/tools", input: "Weather in Paris?", tools: [WEATHER], store: false };
    const whole = await client.responses.create(body);
    const streamed = await client.responses.stream(body).finalResponse();
    for (const r of [whole, streamed]) {
      const call = r.output.find((o) => o.type === "function_call");
      expect(call).toMatchObject({
        type: "function_call",
        name: "get_weather",
        call_id: RESPONSES_CALL.call_id,
      });
      expect(JSON.parse((call as { arguments: string }).arguments)).toEqual({ city: "Paris" });
      expect(r.usage?.output_tokens).toBe(RESPONSES_USAGE.output_tokens);
    }
  });

  it("reasoning comes back as a reasoning item; sent back, the provider gets its own item again", async () => {
    for (const stream of [false, true]) {
      const body = { model: "native/reasoning", input: "Hi", store: false };
      const r = stream
        ? await client.responses.stream(body).finalResponse()
        : await client.responses.create(body);
      const reasoning = r.output.find((o) => o.type === "reasoning") as any;
      expect(reasoning.summary).toEqual([{ type: "summary_text", text: RESPONSES_SUMMARY }]);
      expect(typeof reasoning.encrypted_content).toBe("string");
      expect(r.output_text).toBe(RESPONSES_TEXT.join(""));
      const next = await received(() =>
        client.responses.create({
          model: "native/ok",
          store: false,
          input: [
            { role: "user", content: "Hi" },
            ...(r.output as any[]),
            { role: "user", content: "And now?" },
          ],
        }),
      );
      const input = next.sent[0]!.body.input;
      expect(input[1]).toEqual({
        type: "reasoning",
        id: "rs_native_1",
        summary: [{ type: "summary_text", text: RESPONSES_SUMMARY }],
        encrypted_content: RESPONSES_ENCRYPTED,
      });
      expect(input).toHaveLength(4);
    }
  });

  it("a failure after the first byte ends the stream with response.failed; what was generated is charged", async () => {
    const before = await rig.usage(key);
    const r = await fetch(`${rig.s.baseUrl}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "native/fail-late", input: "Hi", stream: true, store: false }),
    });
    expect(r.status).toBe(200);
    const text = await r.text();
    const types = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_text.delta");
    expect(types.at(-1)).toBe("response.failed");
    expect(types).not.toContain("response.completed");
    expect(text).toContain(`"delta":"${RESPONSES_TEXT[0]}"`);
    expect(await rig.usage(key)).toBeGreaterThan(before);
  });

  it("a fallback from a native provider to one without the flag gets the translation", async () => {
    const {
      result: { data: r, response },
      sent,
    } = await received(() =>
      client.responses
        .create({
          model: "native/error-500",
          models: ["native/error-500", "local/ok"],
          input: "Hi",
          store: false,
          truncation: "auto",
        } as never)
        .withResponse(),
    );
    // The answer came through the translation: it names what that left out.
    expect(response.headers.get("x-gatehouse-left-out")).toContain("truncation");
    expect(sent.map((x) => x.path)).toEqual(["/v1/responses", "/v1/chat/completions"]);
    expect(sent[0]!.body).toMatchObject({ model: "error-500", truncation: "auto" });
    expect(sent[0]!.body.models).toBeUndefined();
    expect(sent[1]!.body.model).toBe("ok");
    expect(r.output_text).toBe("Hello there, friend.");
  });

  it("the same request to a provider without the flag is translated to chat completions", async () => {
    const { result: r, sent } = await received(() =>
      client.responses.create({ model: "local/ok", ...BODY } as never),
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe("/v1/chat/completions");
    expect(sent[0]!.body.messages).toEqual([{ role: "user", content: "Hi" }]);
    expect(sent[0]!.body.include).toBeUndefined();
    expect(sent[0]!.body.truncation).toBeUndefined();
    expect(r.output_text).toBe("Hello there, friend.");
  });
});
