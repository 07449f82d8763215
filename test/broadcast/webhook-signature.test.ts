import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { encoderFor, signStandardWebhook } from "../../src/broadcast/encoders/index.js";
import { sampleGeneration } from "../helpers/broadcast-generations.js";
import { configFor } from "../helpers/destination-configs.js";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import { maskSecret } from "../../src/domain/destinations/mask.js";
import { createWebhook, ingestRecords, makeBroadcastApp, records } from "./broadcast-helpers.js";

/** The body as text (OTLP-based types send the serializer's UTF-8 bytes). */
const text = (body: string | Uint8Array): string =>
  typeof body === "string" ? body : Buffer.from(body).toString("utf8");

/** The signature design for webhooks, verified by the Standard Webhooks reference library. */
describe("signStandardWebhook", () => {
  const secret = `whsec_${Buffer.from("a-32-byte-signing-key-for-tests!").toString("base64")}`;

  it("produces headers the standardwebhooks library accepts for the delivered body", () => {
    const request = encoderFor("webhook").encode([sampleGeneration()], configFor("webhook"))[0]!;
    const signed = signStandardWebhook(request, secret, request.headers["webhook-id"]!, new Date());
    const payload = JSON.parse(text(request.body)) as unknown;
    expect(new Webhook(secret).verify(text(request.body), signed.headers)).toEqual(payload);
    expect(signed.body).toBe(request.body);
  });

  it("a changed body or another secret fails verification", () => {
    const request = encoderFor("webhook").encode([sampleGeneration()], configFor("webhook"))[0]!;
    const signed = signStandardWebhook(request, secret, request.headers["webhook-id"]!, new Date());
    expect(() => new Webhook(secret).verify(`${text(request.body)} `, signed.headers)).toThrow();
    const other = `whsec_${Buffer.from("another-signing-key-of-32-bytes!").toString("base64")}`;
    expect(() => new Webhook(other).verify(text(request.body), signed.headers)).toThrow();
  });
});

/**
 * Signed deliveries end to end: a webhook destination with a signing secret (created through
 * the API, stored sealed, read back masked), the delivery worker sending to a local receiver,
 * and the receiver verifying every request with the Standard Webhooks reference library
 * (`standardwebhooks`), an implementation independent of Gatehouse's.
 */
describe("signed webhook deliveries", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup() {
    const t = await makeBroadcastApp({ attemptTimeoutMs: 5_000 });
    const rx = new TestReceiver();
    await rx.start();
    cleanups.push(
      () => t.close(),
      () => rx.stop(),
    );
    return { t, rx };
  }

  const secret = `whsec_${randomBytes(32).toString("base64")}`;

  it("every delivery and the connection test carry a signature the receiver verifies", async () => {
    const { t, rx } = await setup();
    const id = await createWebhook(t, rx.url, {}, {}, { signingSecret: secret });
    // Masked on read, like every secret.
    const got = await t.call({ method: "GET", url: `/api/v1/observability/destinations/${id}` });
    const shown = got.json<{ data: { config: { signingSecret: string } } }>().data.config.signingSecret;
    expect(shown).toBe(maskSecret(secret));
    expect(got.body).not.toContain(secret);

    const recs = records(t, 150);
    await ingestRecords(t, recs);
    t.broadcaster.start();
    await waitFor(() => rx.delivered.size === 150, 10_000, "150 generations delivered");
    expect(rx.requests.length).toBeGreaterThanOrEqual(2); // 100 per webhook request
    const verifier = new Webhook(secret);
    const seen = new Set<string>();
    for (const r of rx.requests) {
      const payload = verifier.verify(r.body, r.headers as Record<string, string>);
      expect(payload).toEqual(JSON.parse(r.body));
      expect(r.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      const ts = Number(r.headers["webhook-timestamp"]);
      expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(60);
      seen.add(String(r.headers["webhook-id"]));
      // A body changed on the way fails verification.
      expect(() => verifier.verify(`${r.body} `, r.headers as Record<string, string>)).toThrow();
    }
    expect(seen.size).toBe(rx.requests.length);

    const before = rx.requests.length;
    const tested = await t.call({ method: "POST", url: `/api/v1/observability/destinations/${id}/test` });
    expect(tested.json<{ data: { ok: boolean } }>().data.ok).toBe(true);
    const probe = rx.requests[before]!;
    expect(probe.headers["x-test-connection"]).toBe("true");
    expect(probe.headers["webhook-id"]).toMatch(/^msg_test_\d+$/);
    expect(verifier.verify(probe.body, probe.headers as Record<string, string>)).toEqual({
      resourceSpans: [],
    });
  });

  it("a PATCH echoing the masked secret keeps it; removing it stops signing; a malformed one is refused", async () => {
    const { t, rx } = await setup();
    const id = await createWebhook(t, rx.url, {}, {}, { signingSecret: secret });
    const url = `/api/v1/observability/destinations/${id}`;
    const echo = await t.call({
      method: "PATCH",
      url,
      payload: { config: { signingSecret: maskSecret(secret), url: rx.url } },
    });
    expect(echo.statusCode).toBe(200);
    await ingestRecords(t, records(t, 3));
    t.broadcaster.start();
    await waitFor(() => rx.delivered.size === 3, 5_000, "signed delivery");
    const first = rx.requests[0]!;
    expect(new Webhook(secret).verify(first.body, first.headers as Record<string, string>)).toBeTruthy();

    const bad = await t.call({
      method: "PATCH",
      url,
      payload: { config: { signingSecret: "not-a-secret" } },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ error: { message: string } }>().error.message).toContain("config.signingSecret");

    expect(
      (await t.call({ method: "PATCH", url, payload: { config: { signingSecret: null } } })).statusCode,
    ).toBe(200);
    await ingestRecords(t, records(t, 2));
    await waitFor(() => rx.delivered.size === 5, 5_000, "unsigned delivery");
    const last = rx.requests.at(-1)!;
    expect(last.headers["webhook-signature"]).toBeUndefined();
    expect(last.headers["webhook-timestamp"]).toBeUndefined();
    expect(last.headers["webhook-id"]).toMatch(/^msg_/); // still there, for deduplication
  });
});
