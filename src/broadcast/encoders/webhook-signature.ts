import { createHmac } from "node:crypto";
import type { EncodedRequest } from "./encoder.js";

/**
 * Standard Webhooks signing (www.standardwebhooks.com; docs/broadcast.md "Webhook signatures"):
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256
 * of "{id}.{timestamp}.{body}">`. The secret is `whsec_<base64 key>` (the key is the decoded part;
 * the webhook type's `signingSecret` is validated to this form) or raw text. The webhook encoder
 * applies it at send time (its `sign`), so the timestamp is the moment of each attempt.
 */
export function signStandardWebhook(
  request: EncodedRequest,
  secret: string,
  messageId: string,
  now: Date,
): EncodedRequest {
  const key = secret.startsWith("whsec_")
    ? Buffer.from(secret.slice(6), "base64")
    : Buffer.from(secret, "utf8");
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const body =
    typeof request.body === "string" ? Buffer.from(request.body, "utf8") : Buffer.from(request.body);
  const mac = createHmac("sha256", key);
  mac.update(`${messageId}.${timestamp}.`);
  mac.update(body);
  return {
    ...request,
    headers: {
      ...request.headers,
      "webhook-id": messageId,
      "webhook-timestamp": timestamp,
      "webhook-signature": `v1,${mac.digest("base64")}`,
    },
  };
}
