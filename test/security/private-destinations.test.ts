import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { DESTINATION_TYPES, type DestinationType } from "../../src/domain/destinations/destination-types.js";
import { loggerOptions } from "../../src/http/logger.js";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import { configFor } from "../helpers/destination-configs.js";
import {
  deliveries,
  ingestRecords,
  makeBroadcastApp,
  records,
  type BroadcastTestApp,
} from "../broadcast/broadcast-helpers.js";

/**
 * Issue 35: by default a destination cannot reach the operator's network (create, update, test,
 * delivery, replay, every spelling of loopback); a private receiver the operator allowed is
 * reached but its body never comes back (answers, stored rows, log lines). The "internal service"
 * is a loopback receiver answering 500 with a secret in its body.
 */
const SECRET = "INTERNAL-SECRET-c0ffee-4242";
const REFUSED = /^refused: \S+ is a private address \(BROADCAST_REFUSE_PRIVATE_ADDRESSES\)$/;

/** Every destination type with a URL field, and that field. */
const URL_TYPES = (Object.keys(DESTINATION_TYPES) as DestinationType[]).flatMap((type) => {
  const field = DESTINATION_TYPES[type].find((f) => f.check.kind === "url");
  return field ? [{ type, field: field.name }] : [];
});

/**
 * The types that can name the loopback receiver: Datadog sends to `api.<host of url>` (a name such
 * as api.127.0.0.1, which does not resolve here), so it reaches no loopback receiver at all.
 */
const REACHING = URL_TYPES.filter(({ type }) => type !== "datadog");

/** Literal spellings of loopback and "this host" (WHATWG URL normalises most of them). */
const LITERALS = [
  "127.0.0.1",
  "127.1",
  "2130706433",
  "0x7f000001",
  "0177.0.0.1",
  "0.0.0.0",
  "[::1]",
  "[::]",
  "[::ffff:127.0.0.1]",
  "[::ffff:7f00:1]",
  "[64:ff9b::7f00:1]",
];
/** Names of loopback: saved, then refused when a test or a delivery connects. */
const NAMES = ["localhost", "LOCALHOST.", "intranet.localhost"];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The internal service: on 127.0.0.1, answers every request 500 with SECRET in its body. */
async function internalService(): Promise<{ port: number; requests: string[]; stop(): Promise<void> }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests.push(`${req.method} ${req.url}`);
      res.writeHead(500, { "content-type": "text/plain" }).end(`internal error, token=${SECRET}`);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

interface Setup {
  t: BroadcastTestApp;
  rx: Awaited<ReturnType<typeof internalService>>;
  logLines: string[];
}

/** An app with the policy of `env` and the production logger captured, and the internal service. */
async function setup(env: Record<string, string>): Promise<Setup> {
  const logLines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString("utf8"));
      done();
    },
  });
  const { refusePrivateAddresses, allowedPrivateHosts } = loadConfig(env).broadcast;
  const opts = loggerOptions(loadConfig({ GATEHOUSE_DATA_DIR: "/tmp/gatehouse-test", LOG_LEVEL: "trace" }));
  const t = await makeBroadcastApp(
    { refusePrivateAddresses, allowedPrivateHosts, maxAttempts: 1 },
    undefined,
    {
      ...(opts as object),
      stream,
    },
  );
  const rx = await internalService();
  cleanups.push(
    () => t.close(),
    () => rx.stop(),
  );
  return { t, rx, logLines };
}

const create = (t: BroadcastTestApp, type: DestinationType, config: Record<string, unknown>) =>
  t.call({
    method: "POST",
    url: "/api/v1/observability/destinations",
    payload: { type, name: `${type} destination`, config },
  });

const testOp = async (t: BroadcastTestApp, id: string) => {
  const res = await t.call({ method: "POST", url: `/api/v1/observability/destinations/${id}/test` });
  expect(res.statusCode).toBe(200);
  return res.json<{ data: { ok: boolean; status: number | null; error: string | null } }>().data;
};

describe("destinations on private addresses, by default (BROADCAST_REFUSE_PRIVATE_ADDRESSES unset)", () => {
  it("create and update with a literal private host are a 400 naming the field, for every type and spelling", async () => {
    const { t, rx } = await setup({});
    for (const { type, field } of URL_TYPES) {
      const good = await create(t, type, { ...configFor(type) });
      expect(good.statusCode, type).toBe(201);
      const id = good.json<{ data: { id: string } }>().data.id;
      for (const host of LITERALS) {
        const url = `http://${host}:${rx.port}/internal`;
        const made = await create(t, type, { ...configFor(type), [field]: url });
        expect(made.statusCode, `${type} ${url}`).toBe(400);
        const message = made.json<{ error: { message: string } }>().error.message;
        expect(message, `${type} ${url}`).toMatch(new RegExp(`^config\\.${field}: refused: `));
        expect(message).toMatch(/is a private address \(BROADCAST_REFUSE_PRIVATE_ADDRESSES\)$/);

        const patched = await t.call({
          method: "PATCH",
          url: `/api/v1/observability/destinations/${id}`,
          payload: { config: { [field]: url } },
        });
        expect(patched.statusCode, `PATCH ${type} ${url}`).toBe(400);
        expect(patched.json<{ error: { message: string } }>().error.message).toMatch(
          new RegExp(`^config\\.${field}: refused: `),
        );
      }
      // Nothing stored: the one good destination, unchanged.
      const read = await t.call({ method: "GET", url: `/api/v1/observability/destinations/${id}` });
      expect(JSON.stringify(read.json())).not.toContain(String(rx.port));
    }
    const list = await t.call({ method: "GET", url: "/api/v1/observability/destinations?limit=100" });
    expect(list.json<{ data: unknown[] }>().data).toHaveLength(URL_TYPES.length);
    expect(rx.requests).toEqual([]);
  });

  it("names of loopback are refused by the test operation, delivery and replay; the receiver sees nothing", async () => {
    const { t, rx, logLines } = await setup({});
    const ids: string[] = [];
    for (const { type, field } of URL_TYPES) {
      for (const host of NAMES) {
        const made = await create(t, type, {
          ...configFor(type),
          [field]: `http://${host}:${rx.port}/internal`,
        });
        expect(made.statusCode, `${type} ${host}`).toBe(201);
        const id = made.json<{ data: { id: string } }>().data.id;
        ids.push(id);
        const result = await testOp(t, id);
        expect(result, `${type} ${host}`).toMatchObject({ ok: false, status: null });
        expect(result.error, `${type} ${host}`).toMatch(REFUSED);
      }
    }
    await ingestRecords(t, records(t, 1));
    t.broadcaster.start();
    for (const id of ids) {
      await waitFor(async () => (await deliveries(t, id)).dead === 1, 10_000, `dead letter of ${id}`);
      expect((await deliveries(t, id)).last_error).toMatch(REFUSED);
    }
    const from = new Date(Date.now() - 3 * 3_600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    for (const id of ids) {
      const replay = await t.call({
        method: "POST",
        url: `/api/v1/observability/destinations/${id}/replay`,
        payload: { from, to },
      });
      expect(replay.statusCode).toBe(202);
      expect(replay.json<{ data: { offered: number } }>().data.offered).toBe(1);
    }
    for (const id of ids) {
      await waitFor(
        async () => (await deliveries(t, id)).dead === 2,
        10_000,
        `replayed dead letter of ${id}`,
      );
    }
    expect(rx.requests).toEqual([]);
    expect(logLines.join("")).not.toMatch(/ECONNREFUSED|socket hang up/);
  });
});

describe("a private receiver the operator allowed: reached, its body never shown", () => {
  for (const [what, env] of [
    ["BROADCAST_REFUSE_PRIVATE_ADDRESSES=false", { BROADCAST_REFUSE_PRIVATE_ADDRESSES: "false" }],
    ["BROADCAST_ALLOWED_PRIVATE_HOSTS=127.0.0.0/8", { BROADCAST_ALLOWED_PRIVATE_HOSTS: "127.0.0.0/8" }],
    ["BROADCAST_ALLOWED_PRIVATE_HOSTS=localhost", { BROADCAST_ALLOWED_PRIVATE_HOSTS: "localhost" }],
  ] as const) {
    it(`${what}: every type reaches it; the answer, stored rows and log lines carry only "HTTP 500"`, async () => {
      const { t, rx, logLines } = await setup(env);
      const host = what.endsWith("localhost") ? "localhost" : "127.0.0.1";
      const ids: string[] = [];
      for (const { type, field } of REACHING) {
        const made = await create(t, type, {
          ...configFor(type),
          [field]: `http://${host}:${rx.port}/internal`,
        });
        expect(made.statusCode, type).toBe(201);
        const id = made.json<{ data: { id: string } }>().data.id;
        ids.push(id);
        const before = rx.requests.length;
        const result = await testOp(t, id);
        expect(rx.requests.length, type).toBe(before + 1);
        expect(result, type).toEqual({
          ok: false,
          status: 500,
          latency_ms: expect.any(Number),
          error: "HTTP 500",
        });
      }
      await ingestRecords(t, records(t, 1));
      t.broadcaster.start();
      const shown: string[] = [];
      for (const id of ids) {
        await waitFor(async () => (await deliveries(t, id)).dead === 1, 10_000, `dead letter of ${id}`);
        const status = await deliveries(t, id);
        expect(status.last_error).toBe("HTTP 500");
        shown.push(JSON.stringify(status));
      }
      const rows = [
        ...(await t.ctx.store.db.selectFrom("broadcast_deliveries").select("last_error").execute()),
        ...(await t.ctx.store.db.selectFrom("broadcast_destination_stats").select("last_error").execute()),
      ];
      expect(logLines.length).toBeGreaterThan(0);
      expect(rows.filter((r) => r.last_error === "HTTP 500").length).toBeGreaterThanOrEqual(2 * ids.length);
      for (const text of [...shown, JSON.stringify(rows), logLines.join("")]) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain("internal error");
      }
      expect(rx.requests.length).toBeGreaterThan(REACHING.length);
    });
  }

  it("a receiver that is down or cuts the connection: Gatehouse's classification, never the socket's text", async () => {
    const { t } = await setup({ BROADCAST_ALLOWED_PRIVATE_HOSTS: "127.0.0.1" });
    const rx = new TestReceiver();
    await rx.start();
    const down = new TestReceiver();
    await down.start();
    await down.stop(); // nothing listens on its port any more
    cleanups.push(() => rx.stop());
    const made = await create(t, "webhook", { url: `http://127.0.0.1:${rx.port}/internal` });
    const id = made.json<{ data: { id: string } }>().data.id;
    rx.queue.push({ kind: "reset" });
    expect(await testOp(t, id)).toMatchObject({ ok: false, status: null, error: "connection reset" });
    rx.queue.push({ kind: "status", status: 302, headers: { location: "http://10.0.0.1/" } });
    expect(await testOp(t, id)).toMatchObject({
      ok: false,
      status: 302,
      error: "HTTP 302 (redirects are not followed)",
    });
    expect(rx.requests).toHaveLength(2);
    const gone = await create(t, "webhook", { url: `http://127.0.0.1:${down.port}/internal` });
    expect(await testOp(t, gone.json<{ data: { id: string } }>().data.id)).toMatchObject({
      ok: false,
      status: null,
      error: "connection refused",
    });
  });
});
