import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPLETION_NANO, PROMPT_NANO, startSurfaceRig, type SurfaceRig } from "./surface-fixtures.js";

/**
 * The Responses API through a listening Gatehouse with the official clients (`openai`
 * responses.create streamed and not, responses.stream(); the OpenRouter SDK's responses.send), on
 * both kinds of fake upstream: the result and events parse, tool calls come back as function_call
 * items, the key is charged what usage.cost says, the record's api is "responses".
 */
let rig: SurfaceRig;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  rig = await startSurfaceRig();
  key = await rig.key("responses");
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

describe("Responses API with the official clients", () => {
  for (const model of ["local/ok", "anthropic/ok"]) {
    it(`${model}: responses.create answers a completed result; the key is charged usage.cost`, async () => {
      const before = await rig.usage(key);
      const r = await client.responses.create({ model, input: "Hi", max_output_tokens: 50, store: false });
      expect(r.status).toBe("completed");
      expect(r.output_text).toBe("Hello there, friend.");
      const u = r.usage as unknown as Record<string, number>;
      const cost = (u.input_tokens! * PROMPT_NANO + u.output_tokens! * COMPLETION_NANO) / 1e9;
      expect(u.cost).toBeCloseTo(cost, 12);
      expect((await rig.usage(key)) - before).toBeCloseTo(cost, 12);
      expect(await rig.apiOf(r.id)).toBe("responses");
    });

    it(`${model}: streamed, the events arrive in order and responses.stream() ends with the full result`, async () => {
      const events: string[] = [];
      const stream = await client.responses.create({ model, input: "Hi", stream: true, store: false });
      for await (const e of stream) events.push(e.type);
      expect(events[0]).toBe("response.created");
      expect(events).toContain("response.output_text.delta");
      expect(events.at(-1)).toBe("response.completed");
      const final = await client.responses.stream({ model, input: "Hi", store: false }).finalResponse();
      expect(final.output_text).toBe("Hello there, friend.");
      expect(final.usage?.output_tokens).toBeGreaterThan(0);
      expect(await rig.apiOf(final.id)).toBe("responses");
    });

    it(`${model}: a tool call comes back as a function_call item, streamed and not`, async () => {
      const body = {
        model: model.replace("/ok", "/tools"),
        input: "Weather in Paris?",
        tools: [WEATHER],
        store: false,
      };
      const whole = await client.responses.create(body);
      const streamed = await client.responses.stream(body).finalResponse();
      for (const r of [whole, streamed]) {
        const call = r.output.find((o) => o.type === "function_call");
        expect(call).toMatchObject({ type: "function_call", name: "get_weather" });
        expect(JSON.parse((call as { arguments: string }).arguments)).toEqual({ city: "Paris" });
      }
    });
  }

  it("a function_call_output sent back is accepted on both kinds of provider", async () => {
    for (const model of ["local/ok", "anthropic/ok"]) {
      const r = await client.responses.create({
        model,
        store: false,
        tools: [WEATHER],
        input: [
          { role: "user", content: "Weather in Paris?" },
          { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
          { type: "function_call_output", call_id: "call_1", output: "sunny" },
        ],
      });
      expect(r.status).toBe("completed");
    }
  });

  it("the OpenRouter SDK's responses.send parses the result with its usage", async () => {
    const r = await rig.s.sdk(key).responses.send({
      responsesRequest: { model: "local/ok", input: "Hi", maxOutputTokens: 50 },
    });
    if (!("output" in r)) throw new Error("expected a whole result");
    expect(r.status).toBe("completed");
    expect(r.usage?.cost).toBeGreaterThan(0);
  });

  it("stateful requests are a 400 naming the field; a hosted tool is left out and named in a header", async () => {
    await expect(
      client.responses.create({ model: "local/ok", input: "Hi", store: true }),
    ).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      client.responses.create({
        model: "local/ok",
        input: "Hi",
        store: false,
        previous_response_id: "resp_1",
      }),
    ).rejects.toThrow(/previous_response_id/);
    const raw = await client.responses
      .create({ model: "local/ok", input: "Hi", store: false, tools: [WEATHER, { type: "web_search" }] })
      .withResponse();
    expect(raw.response.headers.get("x-gatehouse-left-out")).toContain("web_search");
    expect(raw.data.status).toBe("completed");
  });
});
