import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { encoderFor, signStandardWebhook } from "../../src/broadcast/encoders/index.js";
import { sampleGeneration } from "../helpers/broadcast-generations.js";
import { configFor } from "../helpers/destination-configs.js";

/** The signature design for webhooks, verified by the Standard Webhooks reference library. */
describe("signStandardWebhook", () => {
  const secret = `whsec_${Buffer.from("a-32-byte-signing-key-for-tests!").toString("base64")}`;

  it("produces headers the standardwebhooks library accepts for the delivered body", () => {
    const request = encoderFor("webhook").encode([sampleGeneration()], configFor("webhook"))[0]!;
    const signed = signStandardWebhook(request, secret, request.headers["webhook-id"]!, new Date());
    const payload = JSON.parse(request.body as string) as unknown;
    expect(new Webhook(secret).verify(request.body as string, signed.headers)).toEqual(payload);
    expect(signed.body).toBe(request.body);
  });

  it("a changed body or another secret fails verification", () => {
    const request = encoderFor("webhook").encode([sampleGeneration()], configFor("webhook"))[0]!;
    const signed = signStandardWebhook(request, secret, request.headers["webhook-id"]!, new Date());
    expect(() => new Webhook(secret).verify(`${request.body as string} `, signed.headers)).toThrow();
    const other = `whsec_${Buffer.from("another-signing-key-of-32-bytes!").toString("base64")}`;
    expect(() => new Webhook(other).verify(request.body as string, signed.headers)).toThrow();
  });
});
