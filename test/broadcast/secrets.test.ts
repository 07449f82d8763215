import { afterEach, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import { makeTestApp } from "../helpers/app.js";
import { createWebhook, deliveries, ingestRecords, makeBroadcastApp, records } from "./broadcast-helpers.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("Broadcast secrets", () => {
  it("no API key, key hash or destination secret reaches any payload; header secrets go only in headers", async () => {
    const t = await makeBroadcastApp();
    const rx = new TestReceiver();
    await rx.start();
    cleanups.push(
      () => t.close(),
      () => rx.stop(),
    );
    const headerSecret = "Bearer hdr-secret-0123456789abcdef";
    // A second destination with other secrets, whose values must not reach the first one's payloads.
    const other = await t.call({
      method: "POST",
      url: "/api/v1/observability/destinations",
      payload: {
        type: "langfuse",
        name: "lf",
        enabled: false,
        config: { publicKey: "pk-lf-OTHERSECRET123", secretKey: "sk-lf-OTHERSECRET456", baseUrl: rx.url },
      },
    });
    expect(other.statusCode).toBe(201);
    await createWebhook(
      t,
      rx.url,
      {
        broadcast_generation_cost: true,
        broadcast_generation_identity: true,
        broadcast_generation_request_context: true,
      },
      { authorization: headerSecret },
    );
    const recs = records(t, 20, { is_byok: true, user_id: "u-1", external_user: "ext-1" });
    await ingestRecords(t, recs);
    t.broadcaster.start();
    await waitFor(() => rx.delivered.size === 20, 5_000, "delivery");
    const forbidden = [t.key, hashKey(t.key), "OTHERSECRET", "hdr-secret-0123456789abcdef"];
    for (const r of rx.requests) {
      for (const f of forbidden) expect(r.body).not.toContain(f);
      expect(r.headers.authorization).toBe(headerSecret);
    }
    // The identity group was sent (the flag is on), without any of the above.
    expect(rx.requests[0]?.body).toContain("u-1");
  });

  it("test connection answers status and latency, masks secrets the receiver echoes, 404 across organizations", async () => {
    const t = await makeBroadcastApp();
    const rx = new TestReceiver();
    await rx.start();
    const stranger = await makeTestApp();
    cleanups.push(
      () => t.close(),
      () => rx.stop(),
      () => stranger.close(),
    );
    const secret = "Bearer echo-secret-0123456789abcdef";
    const dest = await createWebhook(t, rx.url, {}, { authorization: secret });
    const ok = await t.call({ method: "POST", url: `/api/v1/observability/destinations/${dest}/test` });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ data: { ok: true, status: 200, error: null } });
    expect(rx.requests.at(-1)?.headers["x-test-connection"]).toBe("true");
    expect(rx.requests.at(-1)?.ids).toEqual([]);

    rx.queue.push({ kind: "echo-auth", status: 401 });
    const bad = await t.call({ method: "POST", url: `/api/v1/observability/destinations/${dest}/test` });
    const data = bad.json<{ data: { ok: boolean; status: number; error: string; latency_ms: number } }>()
      .data;
    expect(data.ok).toBe(false);
    expect(data.status).toBe(401);
    expect(data.error).toContain("HTTP 401");
    expect(data.error).not.toContain("echo-secret-0123456789abcdef");
    expect(typeof data.latency_ms).toBe("number");

    for (const path of ["test", "deliveries", "replay"]) {
      const res = await stranger.call({
        method: path === "deliveries" ? "GET" : "POST",
        url: `/api/v1/observability/destinations/${dest}/${path}`,
        ...(path === "replay"
          ? { payload: { from: "2026-01-01T00:00:00Z", to: "2026-01-02T00:00:00Z" } }
          : {}),
      });
      expect(res.statusCode).toBe(404);
    }
  });

  it("a private receiver that echoes the credentials the encoder derives (Basic base64 of key pairs, URL userinfo) has its body withheld", async () => {
    const t = await makeBroadcastApp({ maxAttempts: 1 });
    const rx = new TestReceiver();
    await rx.start();
    cleanups.push(
      () => t.close(),
      () => rx.stop(),
    );
    const basic = (user: string, pass: string) => Buffer.from(`${user}:${pass}`).toString("base64");
    const lf = await t.call({
      method: "POST",
      url: "/api/v1/observability/destinations",
      payload: {
        type: "langfuse",
        name: "lf",
        config: {
          publicKey: "pk-lf-DERIVED0123",
          secretKey: "sk-lf-DERIVED4567",
          baseUrl: `http://127.0.0.1:${rx.port}`,
        },
      },
    });
    expect(lf.statusCode).toBe(201);
    const lfId = lf.json<{ data: { id: string } }>().data.id;
    // A webhook whose URL carries credentials: Node sends them as Basic authorization.
    const hook = await createWebhook(
      t,
      `http://hookuser:hook-pass-0123456789@127.0.0.1:${rx.port}/v1/traces`,
    );
    const leaked = [
      basic("pk-lf-DERIVED0123", "sk-lf-DERIVED4567"),
      basic("hookuser", "hook-pass-0123456789"),
    ];

    // The connection test's error.
    for (const id of [lfId, hook]) {
      rx.queue.push({ kind: "echo-auth", status: 401 });
      const res = await t.call({ method: "POST", url: `/api/v1/observability/destinations/${id}/test` });
      const error = res.json<{ data: { error: string } }>().data.error;
      expect(error).toBe("HTTP 401");
      for (const l of leaked) expect(error).not.toContain(l.slice(0, 16));
    }

    // A delivery's last error and dead letters, as GET …/deliveries shows them.
    rx.fallback = { kind: "echo-auth", status: 401 };
    await ingestRecords(t, records(t, 2));
    t.broadcaster.start();
    for (const id of [lfId, hook]) {
      await waitFor(async () => (await deliveries(t, id)).dead === 2, 5_000, "dead letters");
      const text = JSON.stringify(await deliveries(t, id));
      expect((await deliveries(t, id)).last_error).toBe("HTTP 401");
      expect(text).not.toContain("bad credentials");
      for (const l of leaked) expect(text).not.toContain(l.slice(0, 16));
    }
  });

  it("BROADCAST_REFUSE_PRIVATE_ADDRESSES refuses a loopback destination at send time", async () => {
    const t = await makeBroadcastApp({ refusePrivateAddresses: true, allowedPrivateHosts: [] });
    const rx = new TestReceiver();
    await rx.start();
    cleanups.push(
      () => t.close(),
      () => rx.stop(),
    );
    const dest = await createWebhook(t, `http://localhost:${rx.port}/v1/traces`);
    const res = await t.call({ method: "POST", url: `/api/v1/observability/destinations/${dest}/test` });
    const data = res.json<{ data: { ok: boolean; error: string } }>().data;
    expect(data.ok).toBe(false);
    expect(data.error).toBe("refused: localhost is a private address (BROADCAST_REFUSE_PRIVATE_ADDRESSES)");
    expect(rx.requests).toEqual([]);
  });

  it("replay validates its range with the error envelope", async () => {
    const t = await makeBroadcastApp();
    cleanups.push(() => t.close());
    const dest = await createWebhook(t, "http://127.0.0.1:9/v1/traces");
    const res = await t.call({
      method: "POST",
      url: `/api/v1/observability/destinations/${dest}/replay`,
      payload: { from: "2026-01-02T00:00:00Z", to: "2026-01-01T00:00:00Z" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: 400, message: "to: must be after from" } });
  });
});
