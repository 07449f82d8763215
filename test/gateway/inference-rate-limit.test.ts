import * as errors from "@openrouter/sdk/models/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * The `inference` rate-limit class (RATE_LIMIT_INFERENCE_MAX per RATE_LIMIT_INFERENCE_WINDOW_MS,
 * docs/configuration.md "Rate limits"): counted per calling key on POST /chat/completions only;
 * over it the answer is 429 in the spec's envelope with Retry-After, before anything is reserved
 * or forwarded.
 */
const MAX = 3;

describe("inference rate limit", () => {
  let s: ListeningApp;
  const keys: string[] = [];
  beforeAll(async () => {
    s = await startListening({
      clock: systemClock,
      env: { RATE_LIMIT_INFERENCE_MAX: String(MAX), RATE_LIMIT_INFERENCE_WINDOW_MS: "60000" },
    });
    for (const name of ["a", "b"]) {
      const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name } });
      keys.push(r.json<{ key: string }>().key);
    }
  });
  afterAll(() => s.close());

  const ask = (key: string, stream = false) => chat(s, key, { model: "mock/echo", stream });
  const usage = async (key: string) =>
    (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>().data
      .usage;

  it("answers 429 with the envelope and Retry-After past the limit, per key; nothing reserved or charged", async () => {
    const [a, b] = keys as [string, string];
    for (let i = 0; i < MAX; i++) {
      const r = await ask(a, i % 2 === 1);
      expect(r.status).toBe(200);
    }
    const spent = await usage(a);
    for (const stream of [false, true]) {
      const r = await ask(a, stream);
      expect(r.status).toBe(429);
      expect(r.headers.get("content-type")).toMatch(/^application\/json/);
      const retryAfter = Number(r.headers.get("retry-after"));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const body = r.json as { error: { code: number; message: string } };
      expect(body.error.code).toBe(429);
      expect(body.error.message).toMatch(/^Rate limit exceeded: 3 requests per 1 minute/);
    }
    // The official SDK maps it to its 429 class.
    await expect(
      s
        .sdk(a)
        .chat.send({ chatRequest: { model: "mock/echo", messages: [{ role: "user", content: "Hi" }] } }),
    ).rejects.toBeInstanceOf(errors.TooManyRequestsResponseError);
    expect(await usage(a)).toBe(spent);
    expect(await s.app.gateway.holds.store.openCount()).toBe(0);
    // Another key has its own count; management calls of the limited key are another class.
    const other = await ask(b);
    expect(other.status).toBe(200);
    expect((await s.call({ method: "GET", url: "/api/v1/key", auth: a })).statusCode).toBe(200);
  });
});
