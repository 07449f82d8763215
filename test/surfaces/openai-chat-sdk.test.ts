import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSurfaceRig, type SurfaceRig } from "./surface-fixtures.js";

/** Chat completions with the `openai` package, on both kinds of provider, streamed and not. */
let rig: SurfaceRig;
let client: OpenAI;
beforeAll(async () => {
  rig = await startSurfaceRig();
  client = new OpenAI({ apiKey: await rig.key("openai-chat"), baseURL: rig.s.baseUrl, maxRetries: 0 });
});
afterAll(() => rig?.close());

describe("chat completions with the openai package", () => {
  for (const model of ["local/ok", "anthropic/ok"]) {
    it(`${model}: create and a stream give the text and usage with cost`, async () => {
      const c = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }] });
      expect(c.choices[0]!.message.content).toBe("Hello there, friend.");
      expect((c.usage as unknown as { cost: number }).cost).toBeGreaterThan(0);
      const stream = await client.chat.completions.create({
        model,
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
      });
      let text = "";
      let cost = 0;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? "";
        if (chunk.usage) cost = (chunk.usage as unknown as { cost: number }).cost;
      }
      expect(text).toBe("Hello there, friend.");
      expect(cost).toBeGreaterThan(0);
      expect(await rig.apiOf(c.id)).toBe("chat");
    });
  }
});
