import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../helpers/fake-upstreams/anthropic.js";
import { FAKE_OPENAI_KEY, startFakeOpenAI } from "../helpers/fake-upstreams/openai.js";
import { writeProvidersFile } from "../helpers/providers-file.js";
import { startListening } from "../helpers/server.js";

/**
 * The providers built from GATEHOUSE_PROVIDERS_FILE each own a keep-alive pool (undici). Closing
 * the app (what SIGTERM does, src/main.ts) closes them: the upstreams see their connections end
 * at once, not when a keep-alive timer runs out. test/process/gateway-process.test.ts checks the
 * process side (prompt exit after SIGTERM).
 */
describe("provider pools at shutdown", () => {
  it("app.close() ends the kept-alive connections to every file provider", async () => {
    const [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
    const file = writeProvidersFile(
      [
        { slug: "local", kind: "openai-compatible", base_url: `${openai.url}/v1`, api_key_env: "LOCAL_KEY" },
        { slug: "claude", kind: "anthropic", base_url: anthropic.url, api_key: FAKE_ANTHROPIC_KEY },
      ],
      [
        {
          id: "local/ok",
          provider: "local",
          upstream_model: "ok",
          prompt_price: 1e-6,
          completion_price: 2e-6,
        },
        {
          id: "claude/ok",
          provider: "claude",
          upstream_model: "ok",
          prompt_price: 1e-6,
          completion_price: 2e-6,
        },
      ],
    );
    const s = await startListening({
      clock: systemClock,
      env: { GATEHOUSE_PROVIDERS_FILE: file.path, LOCAL_KEY: FAKE_OPENAI_KEY },
    });
    try {
      const key = (await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "pools" } })).json<{
        key: string;
      }>().key;
      for (const model of ["local/ok", "claude/ok"]) {
        for (const stream of [false, true]) {
          const r = await fetch(`${s.baseUrl}/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "Hi" }] }),
          });
          expect(r.status).toBe(200);
          await r.text();
        }
      }
      // Answers that ended with their last event leave their connection open in the pool.
      expect(openai.openConnections()).toBeGreaterThan(0);
      expect(anthropic.openConnections()).toBeGreaterThan(0);
      await s.close();
      // Well inside the upstream's own keep-alive timeout (5 s in Node), so only the close can end them.
      for (let i = 0; i < 20 && openai.openConnections() + anthropic.openConnections() > 0; i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(openai.openConnections()).toBe(0);
      expect(anthropic.openConnections()).toBe(0);
    } finally {
      await s.close().catch(() => undefined);
      await Promise.all([openai.close(), anthropic.close()]);
      file.remove();
    }
  });
});
