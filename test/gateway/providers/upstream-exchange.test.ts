import type { ServerResponse } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAICompatibleAdapter } from "../../../src/gateway/providers/openai/openai-compatible.js";
import {
  UpstreamCancelled,
  UpstreamError,
  UpstreamTimeout,
  type ProviderAdapter,
  type UpstreamCall,
} from "../../../src/gateway/providers/provider.js";
import {
  neverAnswer,
  sse,
  startFakeServer,
  type FakeServer,
} from "../../helpers/fake-upstreams/fake-server.js";
import { upstreamFailure } from "../../helpers/fake-upstreams/upstream-failure.js";

/**
 * The exchange on undici's dispatcher (upstream-http.ts) where it differs from what undici's
 * request() gave: a large error body, a large stream read with backpressure, a request still
 * waiting for a connection when it is cancelled or its deadline passes, and whether a failed
 * request had reached the upstream (UpstreamError.sent: what the gateway charges an abandoned
 * attempt on).
 */
const EVENTS = 400;
const PAD = "x".repeat(2_000);

let fake: FakeServer;
let adapter: ProviderAdapter;

beforeAll(async () => {
  fake = await startFakeServer((req, res: ServerResponse) => {
    const model = String(req.body?.model);
    if (model === "hang") return neverAnswer(res);
    if (model === "html-error") {
      res.writeHead(502, { "content-type": "text/html" });
      return void res.end("<html><body><h1>502 Bad Gateway</h1><p>lb-7.internal.corp:8443</p></body></html>");
    }
    if (model === "html-200") {
      res.writeHead(200, { "content-type": "text/html" });
      return void res.end("<!doctype html><p>sso.internal.corp login</p>");
    }
    if (model === "text-error") {
      res.writeHead(500, { "content-type": "text/plain" });
      return void res.end("model not loaded\n");
    }
    if (model === "huge-error") {
      // 100 KiB of an error body, and then it never ends.
      res.writeHead(503, { "content-type": "application/json" });
      res.write(`{"error":{"message":"overloaded, details follow","details":"`);
      res.write("y".repeat(100 * 1024));
      return neverAnswer(res);
    }
    // A long stream: EVENTS deltas of 2 KB each, written as fast as the socket takes them.
    res.writeHead(200, { "content-type": "text/event-stream" });
    const base = { id: "chatcmpl-big", object: "chat.completion.chunk", created: 1735689600, model };
    for (let i = 0; i < EVENTS; i++)
      sse(res, { ...base, choices: [{ index: 0, delta: { content: `${i}:${PAD}|` }, finish_reason: null }] });
    sse(res, { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
    sse(res, {
      ...base,
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: EVENTS, total_tokens: EVENTS + 3 },
    });
    res.end("data: [DONE]\n\n");
  });
  adapter = createOpenAICompatibleAdapter({
    baseUrl: `${fake.url}/v1`,
    apiKey: "k",
    connections: 1,
    idleTimeoutMs: 10_000,
  });
});
afterAll(async () => {
  await adapter.close?.();
  await fake.close();
});

const call = (model: string, stream = false, timeoutMs = 10_000): UpstreamCall => ({
  upstreamModel: model,
  body: { messages: [{ role: "user", content: "Hi" }], stream },
  timeoutMs,
});

describe("upstream exchange", () => {
  it("a large error body: the message is read from its start, the rest is not awaited, the connection closes", async () => {
    const t0 = performance.now();
    const err = await upstreamFailure(adapter.complete(call("huge-error"), new AbortController().signal));
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(err).toMatchObject({ status: 503, retryable: true });
    expect(err.message).toContain("overloaded, details follow");
    expect(err.message.length).toBeLessThan(400);
    expect(await fake.requests[fake.requests.length - 1]!.closed).toEqual({ aborted: true });
  });

  it("an HTML error page is named, not quoted (its markup may name internal hosts); plain text is quoted", async () => {
    const html = await upstreamFailure(adapter.complete(call("html-error"), new AbortController().signal));
    expect(html).toMatchObject({ status: 502, retryable: true });
    expect(html.message).toContain("an HTML page");
    expect(html.message).not.toMatch(/internal\.corp|<html|<h1/);
    const text = await upstreamFailure(adapter.complete(call("text-error"), new AbortController().signal));
    expect(text).toMatchObject({ status: 500, retryable: true });
    expect(text.message).toContain("model not loaded");
    const page = await upstreamFailure(adapter.complete(call("html-200"), new AbortController().signal));
    expect(page).toMatchObject({ status: null, retryable: true });
    expect(page.message).toContain("an HTML page, not JSON");
    expect(page.message).not.toMatch(/internal\.corp|<p>/);
  });

  it("a stream larger than the read-ahead arrives whole and in order to a consumer that lags", async () => {
    const texts: string[] = [];
    let usage: unknown = null;
    for await (const c of adapter.stream(call("big", true), new AbortController().signal)) {
      const content = c.choices[0]?.delta.content;
      if (typeof content === "string") texts.push(content);
      if (c.usage) usage = c.usage;
      if (texts.length % 50 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    expect(texts).toHaveLength(EVENTS);
    texts.forEach((t, i) => expect(t).toBe(`${i}:${PAD}|`));
    expect(usage).toMatchObject({ completionTokens: EVENTS });
    // Read to its end: the upstream saw a complete answer, not a closed connection.
    expect(await fake.requests[fake.requests.length - 1]!.closed).toEqual({ aborted: false });
  });

  it("a request still waiting for a connection fails at once when cancelled, and at its own deadline", async () => {
    // The pool's only connection is taken by an answer that never comes.
    const holder = new AbortController();
    const held = adapter.complete(call("hang"), holder.signal).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));

    const ac = new AbortController();
    const cancelled = upstreamFailure(adapter.complete(call("hang"), ac.signal));
    const t0 = performance.now();
    setTimeout(() => ac.abort(), 50);
    // Never written to the upstream: the provider did not get the prompt.
    expect(await cancelled).toMatchObject({ status: null, retryable: false, sent: false });
    expect(performance.now() - t0).toBeLessThan(1_000);

    const t1 = performance.now();
    const late = await upstreamFailure(
      adapter.complete(call("hang", false, 200), new AbortController().signal),
    );
    expect(late).toBeInstanceOf(UpstreamTimeout);
    expect(late.sent).toBe(false);
    expect(performance.now() - t1).toBeLessThan(1_500);

    holder.abort();
    // The one on the connection was sent: the upstream has it.
    const heldErr = await held;
    expect(heldErr).toBeInstanceOf(UpstreamCancelled);
    expect((heldErr as UpstreamError).sent).toBe(true);
  });

  it("a failure says whether the request reached the upstream: refused is not sent; timed out or cancelled there is", async () => {
    // A port where nothing listens.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const nowhere = createOpenAICompatibleAdapter({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKey: "k",
      idleTimeoutMs: 10_000,
    });
    try {
      const refused = await upstreamFailure(nowhere.complete(call("ok"), new AbortController().signal));
      expect(refused).toMatchObject({ status: null, retryable: true, sent: false });
      const stream = nowhere.stream(call("ok", true), new AbortController().signal)[Symbol.asyncIterator]();
      expect(await upstreamFailure(stream.next())).toMatchObject({ sent: false });
    } finally {
      await nowhere.close?.();
    }

    const seen = fake.requests.length;
    const timedOut = await upstreamFailure(
      adapter.complete(call("hang", false, 200), new AbortController().signal),
    );
    expect(timedOut).toBeInstanceOf(UpstreamTimeout);
    expect(timedOut.sent).toBe(true);
    expect(fake.requests.length).toBe(seen + 1);

    const ac = new AbortController();
    const hung = adapter.stream(call("hang", true), ac.signal)[Symbol.asyncIterator]();
    const first = upstreamFailure(hung.next());
    while (fake.requests.length === seen + 1) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    const cancelled = await first;
    expect(cancelled).toBeInstanceOf(UpstreamCancelled);
    expect(cancelled.sent).toBe(true);
  });
});
