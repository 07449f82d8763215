import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { countPromptTokens } from "../../src/gateway/tokens/count-tokens.js";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../helpers/fake-upstreams/anthropic.js";
import { FAKE_OPENAI_KEY, startFakeOpenAI } from "../helpers/fake-upstreams/openai.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { dataUrl, pngBytes } from "../helpers/images.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * The gateway's estimate of a prompt's images follows the rule of the provider that serves it
 * (issue 35): an upstream that reports no usage is charged the estimate its reservation was made
 * with, so the recorded prompt tokens show which rule counted. A 512×512 image is one tile for
 * OpenAI (255 tokens) and 512 × 512 / 750 for Anthropic (350), not a flat 765 for both.
 */
let openai: FakeServer;
let anthropic: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  const model = (id: string, provider: string, upstream: string) => ({
    id,
    provider,
    upstream_model: upstream,
    prompt_price: 0.000001,
    completion_price: 0.000002,
  });
  file = writeProvidersFile(
    [
      { slug: "oai", kind: "openai-compatible", base_url: `${openai.url}/v1`, api_key: FAKE_OPENAI_KEY },
      { slug: "claude", kind: "anthropic", base_url: anthropic.url, api_key: FAKE_ANTHROPIC_KEY },
    ],
    [model("oai/quiet", "oai", "no-usage"), model("claude/quiet", "claude", "no-usage")],
  );
  s = await startListening({ clock: systemClock, env: { GATEHOUSE_PROVIDERS_FILE: file.path } });
});

afterAll(async () => {
  await s?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
  file?.remove();
});

const TEXT = { type: "text", text: "What is in this picture?" };
const image = dataUrl("image/png", pngBytes(512, 512, 2 * 1024 * 1024));
const messages = [{ role: "user", content: [TEXT, { type: "image_url", image_url: { url: image } }] }];
const textOnly = countPromptTokens([{ role: "user", content: [TEXT] }]);

async function promptTokensOf(model: string): Promise<number> {
  const key = (await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: model } })).json<{
    key: string;
  }>().key;
  const r = await chat(s, key, { model, messages, max_tokens: 16 });
  expect(r.status, r.text.slice(0, 300)).toBe(200);
  const id = r.id!;
  await s.app.gateway.recorder.settled();
  const g = await s.call({ method: "GET", url: `/api/v1/generation?id=${id}`, auth: key });
  expect(g.statusCode, g.body).toBe(200);
  return g.json<{ data: { tokens_prompt: number } }>().data.tokens_prompt;
}

describe("image token estimates by the serving provider's rule", () => {
  it("an OpenAI-compatible provider: 170 per 512-px tile + 85", async () => {
    expect(await promptTokensOf("oai/quiet")).toBe(textOnly + 255);
  });

  it("Anthropic: width × height / 750", async () => {
    expect(await promptTokensOf("claude/quiet")).toBe(textOnly + 350);
  });
});
