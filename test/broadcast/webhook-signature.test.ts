import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { encoderFor, signStandardWebhook } from "../../src/broadcast/encoders/index.js";
import { sampleGeneration } from "../helpers/broadcast-generations.js";
import { configFor } from "../helpers/destination-configs.js";

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
