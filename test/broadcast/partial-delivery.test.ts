import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { LiveContext } from "../../src/broadcast/live-context.js";
import { OTLP_MAX_BYTES } from "../../src/broadcast/encoders/otlp-encoder.js";
import { statusOfRow } from "../../src/broadcast/operations/delivery-status.js";
import { ingestGenerations } from "../../src/domain/ingest/ingest-generations.js";
import { systemClock } from "../../src/lib/clock.js";
import { idsOfOtlp, waitFor } from "../helpers/broadcast-receiver.js";
import {
  createWebhook,
  deliveries,
  makeBroadcastApp,
  records,
  type BroadcastTestApp,
} from "./broadcast-helpers.js";

/**
 * A claim whose requests have different outcomes: each generation is settled by the requests
 * that carry it. Real SQLite, the real encoders, a local HTTP receiver.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Seen {
  url: string;
  bytes: number;
  ids: string[];
  status: number;
}

/** A receiver that answers each request with `answer(request)`, after `delayMs`. */
async function receiver(
  answer: (url: string, body: Buffer) => number,
  delayMs = 0,
): Promise<{ url: string; port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const status = answer(req.url ?? "", body);
      const text = body.toString("utf8");
      const ids = text.startsWith('{"resourceSpans"') ? idsOfOtlp(text) : [];
      setTimeout(() => {
        seen.push({ url: req.url ?? "", bytes: body.length, ids, status });
        res.writeHead(status, { "content-type": "application/json" }).end(status < 300 ? "{}" : "refused");
      }, delayMs);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.address() as AddressInfo).port;
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  return { url: `http://127.0.0.1:${port}/v1/traces`, port, seen };
}

const context = (output: string): LiveContext => ({
  input: [{ role: "user", content: "hello" }],
  output,
  params: null,
  trace: null,
  attempts: [],
  appTitle: null,
  referer: null,
  sessionId: null,
  promptCostUsd: null,
  completionCostUsd: null,
});

/** Records accepted as the gateway's recorder accepts them: with their LiveContexts. */
async function ingestLive(t: BroadcastTestApp, recs: Record<string, unknown>[], outputs: string[]) {
  const contexts = new Map(recs.map((r, i) => [r.id as string, context(outputs[i] ?? "ok")]));
  await ingestGenerations(
    { store: t.ctx.store, activity: t.ctx.activity, clock: systemClock, accepted: t.ctx.accepted },
    t.organizationId,
    recs,
    { broadcast: true, liveContexts: contexts },
  );
}

/** The destination's delivery state, read from the store (polling the API would hit its rate limit). */
const status = (t: BroadcastTestApp, id: string) => statusOfRow(t.ctx.store.db, id, Date.now());

describe("Broadcast: a claim's requests settle their own generations", () => {
  it("a generation over the receiver's body limit is dead-lettered alone; the rest of its claim is delivered once", async () => {
    const t = await makeBroadcastApp({ attemptTimeoutMs: 5_000 });
    cleanups.push(() => t.close());
    // The receiver refuses bodies over the 4 MB the OTLP encoders pack to, as a proxy's limit would.
    const rx = await receiver((_url, body) => (body.length > OTLP_MAX_BYTES ? 413 : 200));
    const dest = await createWebhook(t, rx.url);
    const recs = records(t, 5);
    const huge = "x".repeat(1_200_000); // sent under several keys: one body of about 5 MB
    await ingestLive(t, recs, ["a", "b", huge, "d", "e"]);
    t.broadcaster.start();
    await waitFor(async () => (await status(t, dest)).pending === 0, 15_000, "nothing pending");
    const ids = recs.map((r) => r.id as string);
    const delivered = rx.seen.filter((s) => s.status === 200).flatMap((s) => s.ids);
    expect(delivered.sort()).toEqual([ids[0], ids[1], ids[3], ids[4]].sort());
    expect(rx.seen.filter((s) => s.status === 413).flatMap((s) => s.ids)).toEqual([ids[2]]);
    const s = await deliveries(t, dest);
    expect(s).toMatchObject({ pending: 0, delivered: 4, dead: 1 });
    const letters = s.recent_dead_letters as { generations: number; last_error: string }[];
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ generations: 1, last_error: "HTTP 413" });
  });

  it("a claim of slow per-generation requests (S3) that outlasts its lease still delivers every generation", async () => {
    // attemptTimeoutMs 300: a claim may send for 4 × 300 + 5,000 - 300 = 5.9 s; 100 PUTs of 80 ms
    // need 8 s. (In production: 15 s attempts, 50 s per claim, 100 PUTs of more than 0.5 s.)
    const t = await makeBroadcastApp({ attemptTimeoutMs: 300 });
    cleanups.push(() => t.close());
    const rx = await receiver(() => 200, 80);
    const res = await t.call({
      method: "POST",
      url: "/api/v1/observability/destinations",
      payload: {
        type: "s3",
        name: "bucket",
        config: {
          bucketName: "traces",
          accessKeyId: "AKIAEXAMPLE0123456",
          secretAccessKey: "secret-access-key-0123456789",
          endpoint: `http://127.0.0.1:${rx.port}`,
          region: "us-east-1",
        },
      },
    });
    expect(res.statusCode).toBe(201);
    const dest = res.json<{ data: { id: string } }>().data.id;
    const recs = records(t, 100);
    await ingestLive(t, recs, []);
    t.broadcaster.start();
    await waitFor(async () => (await status(t, dest)).delivered === 100, 25_000, "100 objects delivered");
    const objects = new Set(rx.seen.map((s) => s.url));
    expect(objects.size).toBe(100);
    for (const r of recs) expect([...objects].some((u) => u.includes(r.id as string))).toBe(true);
    expect(await deliveries(t, dest)).toMatchObject({ pending: 0, dead: 0, delivered: 100 });
  });
});
