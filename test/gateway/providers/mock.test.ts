import { describe, expect, it } from "vitest";
import { MockAdapter } from "../../../src/gateway/providers/mock.js";
import {
  UpstreamCancelled,
  UpstreamTimeout,
  type UpstreamCall,
} from "../../../src/gateway/providers/provider.js";

/** The built-in mock keeps to the call's first-byte deadline as the HTTP adapters do. */
const call = (timeoutMs: number): UpstreamCall => ({
  upstreamModel: "echo",
  body: { messages: [{ role: "user", content: "Hello there" }] },
  timeoutMs,
});
const signal = () => new AbortController().signal;

describe("mock provider: first-byte deadline", () => {
  it("a latency past the deadline fails with UpstreamTimeout after the deadline, not the latency", async () => {
    const mock = new MockAdapter({ latencyMs: 5_000 });
    const t0 = performance.now();
    const err = await mock.complete(call(100), signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamTimeout);
    // The mock has the request from the start, as an upstream on an open connection.
    expect(err).toMatchObject({ phase: "first-byte", timeoutMs: 100, retryable: true, sent: true });
    // Far below the 5 s latency, with room for a loaded CI machine (the deadline is 100 ms).
    expect(performance.now() - t0).toBeLessThan(2_500);
    const it = mock.stream(call(100), signal())[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toBeInstanceOf(UpstreamTimeout);
  });

  it("a latency within the deadline answers", async () => {
    const mock = new MockAdapter({ latencyMs: 20 });
    const res = await mock.complete(call(1_000), signal());
    expect(res.choices[0]?.message.content).toBe("Echo: Hello there");
    const chunks = [];
    for await (const c of mock.stream(call(1_000), signal())) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(1);
  });
});

describe("mock provider: whether a failed call was sent", () => {
  it("a call cancelled while the mock waits was sent; one whose signal had fired before was not", async () => {
    const mock = new MockAdapter({ latencyMs: 5_000 });
    const ac = new AbortController();
    const pending = mock.complete(call(10_000), ac.signal).catch((e: unknown) => e);
    setTimeout(() => ac.abort(), 20);
    const err = await pending;
    expect(err).toBeInstanceOf(UpstreamCancelled);
    expect(err).toMatchObject({ sent: true, retryable: false });
    const late = mock.stream(call(10_000), ac.signal)[Symbol.asyncIterator]();
    const before = await late.next().catch((e: unknown) => e);
    expect(before).toBeInstanceOf(UpstreamCancelled);
    expect(before).toMatchObject({ sent: false });
  });
});
