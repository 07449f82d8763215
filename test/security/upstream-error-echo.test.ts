import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { sse, startFakeServer, type FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * An upstream that echoes the credential it was sent in its error message (some do: "Incorrect
 * API key provided: …", a proxy quoting the request's headers) must not hand that credential to
 * the gateway's client: not the platform's key from the providers file, not its extra headers,
 * not an organization's own BYOK key. Checked through a real listening gateway for every place an
 * upstream's words reach the client: an HTTP error body (full and streamed, before any output),
 * an error object sent with status 200, and an error event mid-stream; for openai-compatible
 * (Authorization) and anthropic (x-api-key). None of the secrets below is `sk-`-shaped, so the
 * generic credential pattern alone would not catch them.
 */
const PLATFORM_KEY = "plat-ECHO-0123456789abcdef";
const HEADER_SECRET = "hdr-ECHO-feedfacecafe";
const ANTHROPIC_KEY = "ant-ECHO-9876543210fedcba";
const BYOK_KEY = "byok-ECHO-00112233445566778899";
const ALL = [PLATFORM_KEY, HEADER_SECRET, ANTHROPIC_KEY, BYOK_KEY];

type Mode = "http-401" | "inband-200" | "mid-stream";

let upstream: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;
let key: string;
let mode: Mode = "http-401";

beforeAll(async () => {
  upstream = await startFakeServer((req, res) => {
    const echoed = `bad credentials: authorization=${String(req.headers.authorization)} x-api-key=${String(
      req.headers["x-api-key"],
    )} x-org-token=${String(req.headers["x-org-token"])}`;
    const anthropic = req.path.startsWith("/claude");
    const stream = req.body?.stream === true;
    if (mode === "http-401") {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: echoed, type: "authentication_error" } }));
      return;
    }
    if (mode === "inband-200" && !stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: echoed, code: 401 } }));
      return;
    }
    // A stream that starts, then fails with the echo in its error event.
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (anthropic) {
      sse(
        res,
        {
          type: "message_start",
          message: { id: "msg_1", model: "m", usage: { input_tokens: 3, output_tokens: 0 } },
        },
        "message_start",
      );
      sse(
        res,
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        "content_block_start",
      );
      sse(
        res,
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } },
        "content_block_delta",
      );
      sse(res, { type: "error", error: { type: "api_error", message: echoed } }, "error");
    } else {
      const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m" };
      sse(res, {
        ...base,
        choices: [{ index: 0, delta: { role: "assistant", content: "Hi" }, finish_reason: null }],
      });
      sse(res, { ...base, choices: [], error: { message: echoed, code: 500 } });
    }
    res.end();
  });
  file = writeProvidersFile(
    [
      {
        slug: "echo",
        kind: "openai-compatible",
        base_url: `${upstream.url}/echo/v1`,
        api_key: PLATFORM_KEY,
        headers: { "x-org-token": HEADER_SECRET },
        timeout_ms: 5_000,
      },
      {
        slug: "claude",
        kind: "anthropic",
        base_url: `${upstream.url}/claude`,
        api_key: ANTHROPIC_KEY,
        timeout_ms: 5_000,
      },
    ],
    [
      {
        id: "echo/chat",
        provider: "echo",
        upstream_model: "m",
        prompt_price: 0.000001,
        completion_price: 0.000002,
      },
      {
        id: "claude/chat",
        provider: "claude",
        upstream_model: "m",
        prompt_price: 0.000001,
        completion_price: 0.000002,
      },
    ],
  );
  s = await startListening({ clock: systemClock, env: { GATEHOUSE_PROVIDERS_FILE: file.path } });
  key = (await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "echo", limit: 10 } })).json<{
    key: string;
  }>().key;
});

afterAll(async () => {
  await s?.close();
  await upstream?.close();
  file?.remove();
});

const expectNoSecret = (text: string) => {
  for (const secret of ALL) expect(text).not.toContain(secret);
  // Not even a recognisable piece of one.
  expect(text).not.toMatch(/ECHO-/);
};

describe("an upstream's error message that echoes the credential reaches the client redacted", () => {
  for (const model of ["echo/chat", "claude/chat"]) {
    for (const stream of [false, true]) {
      it(`${model} (${stream ? "stream" : "full"}): HTTP 401 body quoting the credential`, async () => {
        mode = "http-401";
        const r = await chat(s, key, { model, stream });
        expect(r.status).toBe(502);
        expect(r.text).toMatch(/upstream answered 401: bad credentials: .*\[redacted\]/);
        expectNoSecret(r.text);
      });
    }
    it(`${model} (stream): an error event after output quoting the credential`, async () => {
      mode = "mid-stream";
      const r = await chat(s, key, { model, stream: true });
      expect(r.status).toBe(200);
      expect(r.text).toMatch(/Upstream provider failed mid-stream: .*bad credentials: .*\[redacted\]/);
      expectNoSecret(r.text);
    });
  }

  it("echo/chat (full): an error object with status 200 quoting the credential", async () => {
    mode = "inband-200";
    const r = await chat(s, key, { model: "echo/chat", stream: false });
    expect(r.status).toBe(502);
    expect(r.text).toMatch(/upstream reported an error: bad credentials: .*\[redacted\]/);
    expectNoSecret(r.text);
  });

  it("an organization's own BYOK key quoted back is redacted too", async () => {
    const created = await s.call({
      method: "POST",
      url: "/api/v1/byok",
      payload: { provider: "echo", key: BYOK_KEY, is_byok_only: true },
    });
    expect(created.statusCode, created.body).toBe(201);
    expectNoSecret(created.body);
    try {
      for (const stream of [false, true]) {
        mode = "http-401";
        const r = await chat(s, key, { model: "echo/chat", stream });
        expect(r.status).toBe(502);
        expect(r.text).toMatch(/authorization=Bearer \[redacted\]/);
        expectNoSecret(r.text);
      }
    } finally {
      const id = created.json<{ data: { id: string } }>().data.id;
      expect((await s.call({ method: "DELETE", url: `/api/v1/byok/${id}` })).statusCode).toBe(200);
    }
  });
});
