import { request, type IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import {
  FAKE_OPENAI_KEY,
  FIREHOSE,
  FIREHOSE_CHUNKS,
  startFakeOpenAI,
} from "../helpers/fake-upstreams/openai.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * A client that reads a stream slower than the upstream writes it: Gatehouse reads the upstream
 * only as fast as the client takes the answer, so the answer does not pile up in its memory; the
 * upstream (here 40 MiB as fast as its connection takes it) is held back by TCP, and the whole
 * answer still arrives once the client reads.
 */
let upstream: FakeServer;
let file: WrittenProvidersFile;
let s: ListeningApp;
let key: string;

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  file = writeProvidersFile(
    [{ slug: "local", kind: "openai-compatible", base_url: `${upstream.url}/v1`, api_key_env: "LOCAL_KEY" }],
    [
      {
        id: "local/firehose",
        provider: "local",
        upstream_model: "firehose",
        prompt_price: 1e-9,
        completion_price: 1e-9,
      },
    ],
  );
  s = await startListening({
    clock: systemClock,
    env: { GATEHOUSE_PROVIDERS_FILE: file.path, LOCAL_KEY: FAKE_OPENAI_KEY },
  });
  key = (
    await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "slow client", limit: 100 } })
  ).json<{ key: string }>().key;
});
afterAll(async () => {
  await s?.close();
  await upstream?.close();
  file?.remove();
});

/**
 * A streamed request for the firehose model, answered (status and headers) but not yet read; to
 * the shared server unless `to` names another.
 */
function openFirehose(
  to: { baseUrl: string; key: string } = { baseUrl: s.baseUrl, key },
): Promise<IncomingMessage> {
  const { port } = new URL(to.baseUrl);
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/api/v1/chat/completions",
        method: "POST",
        headers: { authorization: `Bearer ${to.key}`, "content-type": "application/json" },
      },
      resolve,
    );
    req.on("error", reject);
    req.end(
      JSON.stringify({
        model: "local/firehose",
        stream: true,
        messages: [{ role: "user", content: "Go" }],
      }),
    );
  });
}

/**
 * Waits until the firehose stops writing (its socket is full, or it is done): no progress over
 * three polls 100 ms apart. One quiet poll is not enough on a loaded machine, where the gateway can
 * go 100 ms without the CPU to move a chunk while the buffers still have room (a test that then
 * closed the server saw the stream end normally, [DONE] included).
 */
async function firehoseStalls(): Promise<void> {
  let last = -1;
  let quiet = 0;
  for (let i = 0; i < 60 && quiet < 3; i++) {
    quiet = FIREHOSE.written === last ? quiet + 1 : 0;
    last = FIREHOSE.written;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The generation's detail once it is recorded (polled: a record can follow its answer). */
async function recorded(
  at: ListeningApp,
  id: string,
): Promise<{ cancelled: boolean; tokens_completion: number; usage_nano: string } | null> {
  for (let i = 0; i < 100; i++) {
    const row = await at.ctx.store.db
      .selectFrom("gateway_generations")
      .select("detail")
      .where("id", "=", id)
      .executeTakeFirst();
    if (row)
      return JSON.parse(row.detail) as { cancelled: boolean; tokens_completion: number; usage_nano: string };
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

describe("a slow client", () => {
  it("holds the upstream back instead of the answer piling up; the whole answer arrives when it reads", async () => {
    const res = await openFirehose();
    expect(res.statusCode).toBe(200);
    res.pause(); // reads nothing for a while
    // Time for the upstream to write everything, were nothing holding it back.
    await firehoseStalls();
    expect(FIREHOSE.finished).toBe(false);
    // What the sockets' buffers hold, not the 40 MiB answer.
    expect(FIREHOSE.written).toBeLessThan(FIREHOSE_CHUNKS / 2);
    // Now the client reads: everything arrives, ended as usual.
    let text = "";
    let contentBytes = 0;
    res.setEncoding("utf8");
    res.on("data", (d: string) => {
      text += d;
      // Count the content as it passes, keeping only the tail (the answer is 40 MiB).
      const events = text.split("\n\n");
      text = events.pop()!;
      for (const e of events) {
        if (!e.startsWith("data: {")) continue;
        const c = JSON.parse(e.slice(6)) as { choices: { delta?: { content?: string } }[] };
        contentBytes += c.choices[0]?.delta?.content?.length ?? 0;
      }
      if (events.some((e) => e === "data: [DONE]")) text = "[DONE]";
    });
    res.resume();
    await new Promise((r) => res.on("end", r));
    expect(text).toBe("[DONE]");
    expect(FIREHOSE.finished).toBe(true);
    expect(contentBytes).toBe(FIREHOSE_CHUNKS * 1024);
    await s.app.gateway.recorder.settled();
    expect(await s.app.gateway.holds.store.openCount()).toBe(0);
  });

  it("that leaves while held back ends the wait: the request is recorded as cancelled and its hold released", async () => {
    const res = await openFirehose();
    const id = res.headers["x-gatehouse-generation-id"] as string;
    res.pause();
    await firehoseStalls();
    expect(FIREHOSE.finished).toBe(false);
    res.destroy(); // the client goes away without reading on
    expect((await recorded(s, id))?.cancelled).toBe(true);
    expect(FIREHOSE.finished).toBe(false);
    await s.app.gateway.recorder.settled();
    expect(await s.app.gateway.holds.store.openCount()).toBe(0);
  });

  it("that stays without reading is cancelled when a shutdown's grace runs out: the server closes, the generation is recorded as cancelled, its hold released", async () => {
    const GRACE_MS = 300;
    // A server of its own, closed by the test, with a short grace.
    const own = await startListening({
      clock: systemClock,
      env: {
        GATEHOUSE_PROVIDERS_FILE: file.path,
        LOCAL_KEY: FAKE_OPENAI_KEY,
        GATEHOUSE_SHUTDOWN_GRACE_MS: String(GRACE_MS),
      },
    });
    const ownKey = (
      await own.call({ method: "POST", url: "/api/v1/keys", payload: { name: "stays", limit: 100 } })
    ).json<{ key: string }>().key;
    const res = await openFirehose({ baseUrl: own.baseUrl, key: ownKey });
    try {
      const id = res.headers["x-gatehouse-generation-id"] as string;
      res.pause(); // reads nothing, and stays connected
      await firehoseStalls();
      expect(FIREHOSE.finished).toBe(false);
      expect(own.app.gateway.inFlight.size).toBe(1);

      // Were the wait deaf to the shutdown, the close would never end: the response is unfinished,
      // so closing the server waits for a connection the client never drains.
      const t0 = performance.now();
      const closed = await Promise.race([
        own.app.close().then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), GRACE_MS + 8_000)),
      ]);
      const took = performance.now() - t0;
      expect(closed).toBe(true); // the server finished closing, within a bound
      expect(took).toBeGreaterThanOrEqual(GRACE_MS - 50); // it waited for the stream first
      // The stream was cancelled, not finished: recorded as such (app.close() waits for the record),
      // and charged for what it generated.
      const rec = await recorded(own, id);
      expect(rec?.cancelled).toBe(true);
      expect(rec!.tokens_completion).toBeGreaterThan(0);
      expect(BigInt(rec!.usage_nano)).toBeGreaterThan(0n);
      expect(FIREHOSE.finished).toBe(false);
      expect(own.app.gateway.inFlight.size).toBe(0);
      expect(await own.app.gateway.holds.store.openCount()).toBe(0);
      expect(own.app.gateway.holds.liveCount).toBe(0);
      // The server's side of the connection is gone (its close waited for it); the client that
      // reads now gets what was buffered, and the stream ends without [DONE].
      const { connections, tail } = await new Promise<{ connections: number; tail: string }>((done) => {
        let tail = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (tail = (tail + d).slice(-64)));
        res.on("close", () =>
          own.app.server.getConnections((_e, connections) => done({ connections, tail })),
        );
        res.resume();
      });
      expect(connections).toBe(0);
      expect(tail).not.toContain("[DONE]");
    } finally {
      res.destroy();
      await own.close();
    }
  });
});
