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

/** A streamed request for the firehose model, answered (status and headers) but not yet read. */
function openFirehose(): Promise<IncomingMessage> {
  const { port } = new URL(s.baseUrl);
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/api/v1/chat/completions",
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
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

/** Waits until the firehose stops writing (its socket is full, or it is done). */
async function firehoseStalls(): Promise<void> {
  let last = -1;
  for (let i = 0; i < 40 && FIREHOSE.written !== last; i++) {
    last = FIREHOSE.written;
    await new Promise((r) => setTimeout(r, 100));
  }
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
    let detail: { cancelled: boolean } | null = null;
    for (let i = 0; i < 100 && !detail; i++) {
      const row = await s.ctx.store.db
        .selectFrom("gateway_generations")
        .select("detail")
        .where("id", "=", id)
        .executeTakeFirst();
      if (row) detail = JSON.parse(row.detail) as { cancelled: boolean };
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(detail?.cancelled).toBe(true);
    expect(FIREHOSE.finished).toBe(false);
    await s.app.gateway.recorder.settled();
    expect(await s.app.gateway.holds.store.openCount()).toBe(0);
  });
});
